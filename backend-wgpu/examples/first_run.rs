//! `cargo run -p g16-wgpu --example first_run -- [N] [--u32]`: on lavapipe the first run of each MSM includes the driver compiling its kernels.
//! Times each operation's first and second run on the first adapter (pipeline creation and
//! the driver's first-dispatch compilation show in the first).
use ark_bls12_381::{Fr, G1Projective, G2Projective};
use ark_ec::{CurveGroup, PrimeGroup};
use ark_ff::UniformRand;
use g16_core::backend::NttKind;
use g16_wgpu::{Options, WgpuDevice};

fn timed<R>(what: &str, f: impl FnOnce() -> R) -> R {
    let t = std::time::Instant::now();
    let r = f();
    println!("{what:<28} {:>9.1} ms", t.elapsed().as_secs_f64() * 1e3);
    r
}

fn main() {
    let force_u32 = std::env::args().any(|a| a == "--u32");
    let n: usize = std::env::args().filter_map(|a| a.parse().ok()).next().unwrap_or(300);
    let dev = timed("open", || WgpuDevice::open(&Options { force_u32, ..Default::default() }).unwrap());
    println!("{:?} path, {} formulas", dev.arith(), dev.formulas().name());
    let mut rng = ark_std::test_rng();
    let s: Vec<Fr> = (0..n).map(|_| Fr::rand(&mut rng)).collect();
    let g1: Vec<_> = (0..n).map(|i| (G1Projective::generator() * Fr::from(i as u64 + 1)).into_affine()).collect();
    let g2: Vec<_> = (0..n).map(|i| (G2Projective::generator() * Fr::from(i as u64 + 1)).into_affine()).collect();
    let d = dev.upload_fr(&s).unwrap();
    let b1 = dev.upload_g1(&g1).unwrap();
    let b2 = dev.upload_g2(&g2).unwrap();
    for round in 0..2 {
        let mut x = dev.upload_fr(&s[..n.next_power_of_two() / 2]).unwrap();
        timed(&format!("ntt {round}"), || dev.ntt(&mut x, NttKind::CosetInverse, "ntt", None).unwrap());
        timed(&format!("sync {round}"), || dev.synchronize().unwrap());
        let _ = timed(&format!("msm_g1 n={n} {round}"), || dev.msm_g1(&b1, &d, 0..n, None).unwrap());
        let _ = timed(&format!("msm_g2 n={n} {round}"), || dev.msm_g2(&b2, &d, 0..n, None).unwrap());
    }
    for (m, ms) in dev.pipeline_times() {
        println!("pipeline {m:<20} {ms:>9.1} ms");
    }
}
