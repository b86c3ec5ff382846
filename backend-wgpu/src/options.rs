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
    /// Bytes of each of the two slots large uploads pass through (tests of uploads across
    /// slots and bindings); `None`: `UPLOAD_SLOT_BYTES` (16 MiB).
    pub upload_slot_bytes: Option<u64>,
    /// Lower the workgroup storage the kernels plan with below the device's (tests of the
    /// NTT's smaller tiles, such as WebGPU's default 16 KiB).
    pub max_workgroup_bytes: Option<u32>,
    /// The directory of the on-disk pipeline cache (VkPipelineCache), where the adapter has
    /// one; `None`: no cache.
    pub pipeline_cache: Option<PathBuf>,
    /// The MSM planner's overrides, and which base vectors get shifted bases.
    pub msm: MsmTuning,
    /// Most stages an NTT pass runs when an NTT takes several (at most 8, the default).
    pub ntt_max_pass_stages: Option<u32>,
    /// Where a key's subgroup checks run: `Some(true)` on the device (the batched check's
    /// bucket sums there), `Some(false)` on the host's cores; `None`: the device, unless the
    /// adapter is a software one (lavapipe), which runs on the host's cores slower than the
    /// host's own check (about 4.5× on a 2-core machine, docs/perf/keys.md).
    pub subgroup_on_device: Option<bool>,
}
