//! How to open the CUDA backend: every setting it has, in one struct read once when a device
//! opens. Plain data: the device and the layers above read the fields they need.

use std::path::PathBuf;

use g16_backend::msm_plan::MsmTuning;

/// Which base vectors get shifted bases unless told otherwise: 2^18 ≤ len < 2^25 (G2 vectors
/// also below 2^[`DEFAULT_G2_TABLES_MAX`]). From 2^23 they saved 15–16 % of a G1 MSM and 5–7 %
/// of a 2^24 proof on an H100, H's table first (docs/perf/cuda.md: shifted bases).
pub const DEFAULT_TABLES: (u32, u32) = (18, 25);
/// G2 vectors of 2^this points or more get no shifted bases: a 2^23 G2 vector's table (21 GB,
/// c = 20, twice a G1 one) took its MSM from 181.6 to 151.4 ms on an H100 (6046c35); from 2^24
/// a table is 42 GB and no G2 MSM there has been measured with one.
pub const DEFAULT_G2_TABLES_MAX: u32 = 24;
/// Shifts of the grouped layout's tables by default ([`CudaOptions::table_shifts`]): none
/// until measured.
pub const DEFAULT_TABLE_SHIFTS: u32 = 0;

/// How to open a CUDA device: read once, at [`CudaBackend::open`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CudaOptions {
    /// Which device (`cuda:N`).
    pub ordinal: usize,
    /// Where compiled kernels (CUBIN) are cached; `None`: no on-disk cache, every open
    /// compiles with NVRTC (about a minute a program).
    pub cache_dir: Option<PathBuf>,
    /// Whether MSMs send scalars equal to 1 to a batch addition instead of Pippenger (a
    /// witness of a hash circuit is mostly bits; docs/perf/cuda.md: the 0/1 split.
    pub ones_split: bool,
    /// Overrides of the MSM's window and shifted-bases planning.
    pub msm: MsmTuning,
    /// G2 vectors of 2^this points or more get no shifted bases, whatever `msm` says.
    pub g2_tables_max: u32,
    /// Vectors past the shared layout's range (G1 from 2^25, G2 from 2^`g2_tables_max`) get a
    /// table of at most this many shifts for the grouped layout (`msm_plan::Layout::grouped`:
    /// the fewest that make as many sets), where half the free memory holds it; 0 or 1: none.
    pub table_shifts: u32,
    /// When the shifted bases of an uploaded vector are made.
    pub table_build: TableBuild,
    /// The most bucket entries one MSM sorts at once ([`MAX_MSM_ENTRIES`], what the entries'
    /// 31-bit indices hold): a larger MSM (2^27 points at 16 windows) is cut into MSMs over
    /// consecutive bases whose sums add up. Lower only to exercise the cut at small sizes.
    pub max_msm_entries: u64,
    /// Where the NTT's passes read their inter-pass twiddles from.
    pub ntt_twiddles: NttTwiddles,
    /// How many elements a block of the NTT's pass kernel holds.
    pub ntt_block: NttBlock,
    /// How the MSM's threads share out the buckets' additions.
    pub msm_accumulation: MsmAccumulation,
    /// In what order the MSM's counting sort writes the bucket entries.
    pub msm_scatter: MsmScatter,
    /// On which curves the sliced accumulation computes the mixed addition's Y₃ = R·(Q − X₃) −
    /// Y₁·PPP with its two products reduced together (`Fq::mul_sub_mul`, `Fq2::mul_sub_mul`)
    /// instead of as two products.
    pub madd_fused_y: FusedY,
}

/// Where the mixed addition's Y₃ takes one reduction for its two products ([`CudaOptions::madd_fused_y`]).
///
/// Measured on an H100 at 2^24 (b132e70, two alternating rounds each, docs/perf/cuda.md): G1
/// 135.1 → 131.8 ms (−2.5 %; ~5 % fewer limb products an addition), G2 349.3 → 372.4 ms
/// (+6.6 %, not yet traced).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FusedY {
    /// Two products and two reductions on both curves.
    Off,
    /// One reduction on G1, two on G2.
    #[default]
    G1,
    /// One reduction on both curves.
    Both,
}

impl FusedY {
    /// Whether the accumulation of `curve` takes the fused kernel.
    pub(crate) fn on(self, curve: crate::compile::Curve) -> bool {
        match self {
            FusedY::Off => false,
            FusedY::G1 => curve == crate::compile::Curve::G1,
            FusedY::Both => true,
        }
    }
}

/// The default of [`CudaOptions::max_msm_entries`]: 2^31 − 1.
pub const MAX_MSM_ENTRIES: u64 = (1 << 31) - 1;

/// When the MSM's shifted bases (docs/perf/cuda.md: shifted bases) are made for a vector that
/// the planner gives them: they cost seconds at 2^22 and save milliseconds an MSM, so by
/// default no caller waits for them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TableBuild {
    /// On a stream of low priority once the upload is queued; MSMs take the windowed layout
    /// until the table is done. A key's first proof need not wait for its tables.
    #[default]
    Background,
    /// Before the upload returns, so every MSM after it has the table: for benchmarks of the
    /// steady state.
    Blocking,
    /// Never: the windowed layout only.
    Off,
}

/// The layout of the NTT's inter-pass twiddles ω^e (kernels/ntt/ntt.cu, `inter_pass_twiddle`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum NttTwiddles {
    /// One table of n/2 elements a direction (ω^(e+n/2) = −ω^e): a read a twiddle, scattered
    /// over 2^log_n·16 bytes (256 MB at 2^24, 2 GB at 2^27) in a pass after the first.
    #[default]
    Table,
    /// Two tables of n/4096 and 4096 elements a direction, whose product is the twiddle: they
    /// stay in cache (256 KB at 2^24), for one more product a twiddle. 6–12 % slower than
    /// `Table` on an H100 (docs/perf/cuda.md); it spares 4 GB of device memory at 2^27.
    Split,
}

/// The NTT pass kernel's block (kernels/ntt/ntt.cu): its elements, in shared memory, and the
/// threads that take 4 of them each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum NttBlock {
    /// 1024 elements (32 KB), 256 threads, 3 blocks an SM.
    Elems1024,
    /// 512 elements (16 KB), 128 threads, 6 blocks an SM: the same occupancy with barriers
    /// half as wide; 4.5–7 % faster than 1024 from 2^17 to 2^27 on an H100, 21 % at 2^16
    /// (docs/perf/cuda.md).
    #[default]
    Elems512,
}

impl NttBlock {
    /// Elements a block (`NTT_BLOCK_ELEMS`, `NTT_SMALL_BLOCK_ELEMS` in ntt.cu).
    pub fn elems(self) -> u32 {
        match self {
            NttBlock::Elems1024 => 1024,
            NttBlock::Elems512 => 512,
        }
    }
}

/// How the MSM's accumulation (kernels/msm/) gives its threads the sorted bucket entries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MsmAccumulation {
    /// A thread a bucket (`*_accumulate`): a warp takes as long as its largest bucket.
    Buckets,
    /// Equal slices of the sorted list a thread, across buckets' edges (`*_accumulate_chunks`,
    /// kernels/msm/balanced.cu), whose parts are then added up: every lane does the same
    /// number of additions. On an H100: G1 2^22 −2.8 %, 2^24 −0.3 %, G2 2^22 −8 %, 2^24 −6 %
    /// (docs/perf/cuda.md).
    #[default]
    Chunks,
}

/// In what order the counting sort's scatter (kernels/msm/sort.cu) writes the bucket entries.
///
/// Measured on an H100 (ec4e7f1, docs/perf/cuda.md: the sort's order): by window, the sort of a
/// windowed layout at c = 20 took 29.0 against 46.7 ms at 2^25 and 59.7 against 94.1 at 2^26;
/// the shared layout at 2^24 (2^19 buckets) 15.0 against 12.2.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MsmScatter {
    /// By window where a windowed layout has more than [`SCATTER_BY_WINDOW_ABOVE`] buckets in
    /// all, by scalar otherwise.
    #[default]
    Auto,
    /// A thread a scalar, writing all its windows' entries (`msm_scatter`).
    ByScalar,
    /// One window after another (`msm_scatter_by_window`): the slots written at any moment are
    /// one window's buckets, which stay in L2 where every window's would not; each window
    /// reads the scalars again.
    ByWindow,
}

/// Buckets in all (2^19, 16 MiB of slots being written, a 32-byte sector each) beyond which
/// [`MsmScatter::Auto`] writes one window after another: c = 16's 16 windows of 2^15 buckets
/// are at it; the H100's L2 is 50 MB.
pub const SCATTER_BY_WINDOW_ABOVE: u64 = 1 << 19;

impl MsmScatter {
    /// Whether a layout's entries are written one window after another.
    pub(crate) fn by_window(self, layout: &g16_backend::msm_plan::Layout) -> bool {
        match self {
            MsmScatter::ByScalar => false,
            MsmScatter::ByWindow => true,
            MsmScatter::Auto => !layout.is_shared() && layout.buckets() > SCATTER_BY_WINDOW_ABOVE,
        }
    }
}

impl Default for CudaOptions {
    fn default() -> Self {
        CudaOptions {
            ordinal: 0,
            cache_dir: None,
            ones_split: true,
            msm: MsmTuning { tables: Some(DEFAULT_TABLES), ..MsmTuning::default() },
            g2_tables_max: DEFAULT_G2_TABLES_MAX,
            table_shifts: DEFAULT_TABLE_SHIFTS,
            table_build: TableBuild::Background,
            max_msm_entries: MAX_MSM_ENTRIES,
            ntt_twiddles: NttTwiddles::Table,
            ntt_block: NttBlock::Elems512,
            msm_accumulation: MsmAccumulation::Chunks,
            msm_scatter: MsmScatter::Auto,
            madd_fused_y: FusedY::G1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::Curve;

    #[test]
    fn fused_y_picks_the_kernel_by_curve() {
        let on = |f: FusedY| (f.on(Curve::G1), f.on(Curve::G2));
        assert_eq!(on(FusedY::default()), (true, false));
        assert_eq!(on(FusedY::Off), (false, false));
        assert_eq!(on(FusedY::Both), (true, true));
    }

    #[test]
    fn the_scatter_goes_by_window_only_for_wide_windowed_layouts() {
        use g16_backend::msm_plan::Layout;
        let auto = |l: Layout| MsmScatter::Auto.by_window(&l);
        assert!(!auto(Layout::windowed(16)), "c = 16: 2^19 buckets in all");
        assert!(auto(Layout::windowed(17)) && auto(Layout::windowed(20)));
        assert!(!auto(Layout::shared(20)), "one set of 2^19 buckets");
        assert!(!auto(Layout::windowed(12)));
        assert!(MsmScatter::ByWindow.by_window(&Layout::shared(20)));
        assert!(!MsmScatter::ByScalar.by_window(&Layout::windowed(20)));
    }
}
