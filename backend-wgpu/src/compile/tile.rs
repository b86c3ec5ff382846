//! The NTT pass kernel's tile (shaders/ntt/ntt.wgsl): how many elements one workgroup
//! transforms at once, from the workgroup storage the device grants. The pipeline gets it as
//! override constants, the NTT's planner (ntt.rs) plans its passes from it, and both take it
//! from here, so they agree.

use crate::buffers::Elem;
use crate::device::WgpuDevice;
use crate::error::WgpuError;

/// log2 of the largest tile: 1024 elements (32 KiB), as the CUDA backend's blocks. A larger
/// tile would buy no fewer passes at 2^22–2^24 (passes are at most 8 stages: ntt.rs) and
/// fewer resident workgroups.
pub const MAX_TILE_LOG: u32 = 10;

/// log2 of the smallest tile: 4 elements, one radix-4 subgroup.
pub const MIN_TILE_LOG: u32 = 2;

/// Threads a workgroup at most: a radix-4 round gives each thread 4 of the tile's elements, so
/// a full tile of 1024 keeps 256 busy.
const MAX_THREADS: u32 = 256;

/// The tile of one device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NttTile {
    /// log2 of the elements a workgroup transforms: the largest power of two the storage
    /// holds, at most 2^[`MAX_TILE_LOG`].
    pub log: u32,
    /// Elements the workgroup array holds: the tile, plus up to a quarter more for one pad
    /// element a row where the storage has room (a pass's rows number at most a quarter of the
    /// tile once it spans several passes; ntt.rs pads only when they fit).
    pub shared: u32,
    /// Threads a workgroup.
    pub threads: u32,
}

impl NttTile {
    /// The tile for `storage_bytes` of workgroup storage and `max_threads` invocations a
    /// workgroup; a typed error below the smallest tile.
    pub fn new(storage_bytes: u32, max_threads: u32) -> Result<NttTile, WgpuError> {
        let elem = Elem::Fr.bytes() as u32;
        let capacity = storage_bytes / elem;
        if capacity < 1 << MIN_TILE_LOG {
            return Err(WgpuError::TooLarge {
                what: "the NTT's smallest workgroup tile".into(),
                requested: u64::from(elem) << MIN_TILE_LOG,
                limit: u64::from(storage_bytes),
            });
        }
        let log = (31 - capacity.leading_zeros()).min(MAX_TILE_LOG);
        let tile = 1u32 << log;
        let shared = capacity.min(tile + tile / 4);
        let threads = (tile / 4).min(max_threads).clamp(1, MAX_THREADS);
        Ok(NttTile { log, shared, threads })
    }

    /// The tile of `dev`.
    pub fn of(dev: &WgpuDevice) -> Result<NttTile, WgpuError> {
        let limits = dev.limits();
        let threads = limits.max_compute_invocations_per_workgroup.min(limits.max_compute_workgroup_size_x);
        NttTile::new(dev.workgroup_bytes(), threads)
    }

    /// The override constants of shaders/ntt/ntt.wgsl.
    pub fn constants(&self) -> Vec<(String, f64)> {
        let words = Elem::Fr.words() as u32;
        vec![
            ("ntt_plane".into(), f64::from(self.shared)),
            ("ntt_shared_words".into(), f64::from(self.shared * words)),
            ("ntt_threads".into(), f64::from(self.threads)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_follow_the_storage() {
        // NVIDIA's Vulkan driver (48 KiB): 1024 elements and room for the padding.
        assert_eq!(NttTile::new(48 << 10, 1024).unwrap(), NttTile { log: 10, shared: 1280, threads: 256 });
        // WebGPU's default (16 KiB): 512 elements, no room for padding.
        assert_eq!(NttTile::new(16 << 10, 256).unwrap(), NttTile { log: 9, shared: 512, threads: 128 });
        // 64 KiB: still 1024, the padding in full.
        assert_eq!(NttTile::new(64 << 10, 256).unwrap(), NttTile { log: 10, shared: 1280, threads: 256 });
        // Not a power of two: the largest power of two below, the rest for padding.
        assert_eq!(NttTile::new(24 << 10, 256).unwrap(), NttTile { log: 9, shared: 640, threads: 128 });
        // The smallest, and fewer threads than a tile wants.
        assert_eq!(NttTile::new(128, 256).unwrap(), NttTile { log: 2, shared: 4, threads: 1 });
        assert_eq!(NttTile::new(48 << 10, 64).unwrap().threads, 64);
        assert!(matches!(NttTile::new(127, 256), Err(WgpuError::TooLarge { .. })));
    }
}
