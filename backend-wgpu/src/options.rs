//! How to open the wgpu backend: every setting it has, in one struct read once when a device
//! opens. Plain data: the device and the layers above read the fields they need.

use std::path::PathBuf;

use g16_backend::msm_plan::MsmTuning;

/// How to open a wgpu device: read once, at [`WgpuBackend::open`](crate::WgpuBackend::open).
/// Devices are shared per process by equal options (backend.rs).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct WgpuOptions {
    /// Which usable adapter (see `device::list_adapters`), in order of preference.
    pub ordinal: usize,
    /// Take the 32-bit arithmetic path even where the adapter offers SHADER_INT64.
    pub force_u32: bool,
    /// Lower the per-binding size limit below the adapter's (tests of split bindings).
    pub max_binding_bytes: Option<u64>,
    /// Lower the workgroup storage the kernels plan with below the device's (tests of the
    /// NTT's smaller tiles, such as WebGPU's default 16 KiB).
    pub max_workgroup_bytes: Option<u32>,
    /// The directory of the on-disk pipeline cache (VkPipelineCache), where the adapter has
    /// one; `None`: no cache.
    pub pipeline_cache: Option<PathBuf>,
    /// The MSM planner's overrides, and which base vectors get shifted bases.
    pub msm: MsmTuning,
    /// Where the NTT's passes read their inter-pass twiddles.
    pub ntt_twiddles: NttTwiddles,
    /// How wgpu sizes the device memory blocks it places buffers in.
    pub memory_blocks: MemoryBlocks,
    /// Most stages an NTT pass runs when an NTT takes several (at most 8, the default).
    pub ntt_max_pass_stages: Option<u32>,
}

/// How wgpu sizes the device memory blocks (VkDeviceMemory) it places buffers in: a buffer
/// larger than a block gets a block of its own, smaller ones share blocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MemoryBlocks {
    /// wgpu's `MemoryHints::Performance`: blocks of 128 MiB, then 256 MiB.
    #[default]
    Large,
    /// wgpu's `MemoryHints::MemoryUsage`: blocks of 8 to 64 MiB, so every array of 2^21
    /// field elements or more has its own.
    Small,
}

/// Where the NTT's passes read their inter-pass twiddles ω^e, e < n (shaders/ntt/ntt.wgsl):
/// a pass gathers 2^16 distinct ones spread over the whole table. On the H200 the two run
/// within 4 % of each other at 2^22–2^24 (docs/perf/wgpu.md, "The NTT's cliff").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum NttTwiddles {
    /// The half table ω^e, e < n/2: one read a twiddle, from n/2·32 bytes (256 MiB a
    /// direction at 2^24).
    #[default]
    Half,
    /// The split power table hi[e >> 12]·lo[e mod 2^12]: one product more a twiddle, read
    /// from 32·(2^12 + n/2^12) bytes.
    Split,
}
