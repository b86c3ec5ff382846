//! The CUDA C sources, embedded so a binary needs no files beside it, and the programs NVRTC
//! compiles from them (one per module: NTT and pointwise over Fr; MSM over G1 and G2).

const FF: &str = include_str!("../../kernels/ff.cuh");
const EC: &str = include_str!("../../kernels/ec.cuh");
const NTT: &str = include_str!("../../kernels/ntt.cu");
const MSM: &str = include_str!("../../kernels/msm.cu");

/// One NVRTC translation unit and the kernels the engine loads from it.
pub struct Program {
    pub name: &'static str,
    pub source: String,
    pub kernels: &'static [&'static str],
}

pub const NTT_KERNELS: &[&str] = &[
    "ntt_twiddles",
    "ntt_radix_pass",
    "ntt_radix_pass_call",
    "ntt_radix4_pass",
    "ntt_radix4_pass_4",
    "ntt_radix2_pass",
    "fr_mul",
    "fr_sub",
    "fr_scale",
    "fr_quotient",
];

pub const MSM_KERNELS: &[&str] = &[
    "msm_count",
    "msm_scatter",
    "scan_blocks",
    "scan_add",
    "g1_accumulate",
    "g1_big_pieces",
    "g1_big_combine",
    "g1_bucket_reduce",
    "g1_bit_sums",
    "g1_window_fold",
    "g1_ones_sum",
    "g1_shift_bases",
    "msm_big_plan",
    "g2_accumulate",
    "g2_big_pieces",
    "g2_big_combine",
    "g2_bucket_reduce",
    "g2_bit_sums",
    "g2_window_fold",
    "g2_ones_sum",
    "g2_shift_bases",
];

/// Concatenates headers and a `.cu` file into one translation unit (NVRTC gets no include
/// paths: the sources travel inside the binary).
fn unit(parts: &[&str]) -> String {
    parts.iter().map(|p| p.replace("#pragma once", "")).collect::<Vec<_>>().join("\n")
}

pub fn programs() -> Vec<Program> {
    vec![
        Program { name: "ntt", source: unit(&[FF, NTT]), kernels: NTT_KERNELS },
        Program { name: "msm", source: unit(&[FF, EC, MSM]), kernels: MSM_KERNELS },
    ]
}

/// The field and curve headers alone, for the host-emulation arithmetic tests.
pub fn arithmetic_headers() -> String {
    unit(&[FF, EC])
}
