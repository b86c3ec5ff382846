//! Every kernel the backend launches, with its parameters as its `extern "C" __global__`
//! signature in `kernels/` declares them, and the check of a launch's arguments against them.
//!
//! A launch names its kernel by [`Kernel`], never by a string, so only kernels of this table
//! can be launched; its arguments are checked here (count, and pointer or 32-bit value, in
//! order) before the driver reads them, because a wrong argument list is undefined behaviour
//! on the device rather than an error. The host test (kernels/tests.rs) parses the sources'
//! signatures and holds this table to them, as wgpu's modules are held to their bindings.

use crate::error::ArgumentMismatch;

/// What a pointer parameter points to (the kernels' C types).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    U32,
    U64,
    Fr,
    Fq,
    Fq2,
    G1Affine,
    G2Affine,
    G1Xyzz,
    G2Xyzz,
    /// Jacobian points (X, Y, Z) of kernels/msm/table.cu.
    G1Jacobian,
    G2Jacobian,
    /// `BigBucket` of kernels/msm/bucket.cu: a bucket's key, first entry and count.
    BigBucket,
}

/// Whether a kernel writes through a pointer parameter (`const` or not in its signature).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    ReadWrite,
}

/// A parameter's kind: what the launch must pass for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// A device pointer, passed as its 64-bit address.
    Ptr(Elem, Access),
    U32,
}

/// One parameter of a kernel, named as in its signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: &'static str,
    pub kind: ParamKind,
}

const fn read(name: &'static str, elem: Elem) -> Param {
    Param { name, kind: ParamKind::Ptr(elem, Access::Read) }
}

const fn write(name: &'static str, elem: Elem) -> Param {
    Param { name, kind: ParamKind::Ptr(elem, Access::ReadWrite) }
}

const fn u32(name: &'static str) -> Param {
    Param { name, kind: ParamKind::U32 }
}

/// The parameters of the kernels that compute the scalars' digits (kernels/msm/sort.cu): the
/// scalars and the layout, then `rest`.
fn digit_params(rest: &[Param]) -> Vec<Param> {
    let layout = [read("scalars", Elem::Fr), u32("n"), u32("c"), u32("windows"), u32("stride"), u32("shifts")];
    layout.iter().chain(rest).copied().collect()
}

/// The parameters of the batched subgroup check's sort (kernels/curve/subgroup.cu): the deal
/// and its shape, then `out` and perhaps `then`.
fn deal_params(out: Param, then: Option<Param>) -> Vec<Param> {
    let deal = [read("deal", Elem::U64), u32("n"), u32("bits"), u32("passes"), u32("words"), out];
    deal.iter().copied().chain(then).collect()
}

/// The sliced accumulation's parameters (kernels/msm/balanced.cu), for curve `c`.
fn accumulate_chunks_params(c: Curve) -> Vec<Param> {
    use Elem::{BigBucket, U32};
    vec![
        read("bases", c.affine()),
        read("sorted", U32),
        read("offsets", U32),
        read("counts", U32),
        u32("buckets"),
        u32("chunk_min"),
        u32("big"),
        write("out", c.xyzz()),
        write("carries", c.xyzz()),
        write("tails", U32),
        write("big_list", BigBucket),
        write("big_count", U32),
    ]
}

/// A launch argument: a device address (`CudaDevice::ptr`, possibly offset) or a value.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Arg {
    U32(u32),
    Ptr(u64),
}

impl Arg {
    fn matches(self, kind: ParamKind) -> bool {
        matches!((self, kind), (Arg::U32(_), ParamKind::U32) | (Arg::Ptr(_), ParamKind::Ptr(..)))
    }
}

impl ParamKind {
    /// What an argument for it must be, in words.
    fn wanted(self) -> &'static str {
        match self {
            ParamKind::Ptr(..) => "a device pointer",
            ParamKind::U32 => "a u32",
        }
    }
}

/// Which group a curve kernel is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Curve {
    G1,
    G2,
}

impl Curve {
    fn affine(self) -> Elem {
        match self {
            Curve::G1 => Elem::G1Affine,
            Curve::G2 => Elem::G2Affine,
        }
    }

    fn xyzz(self) -> Elem {
        match self {
            Curve::G1 => Elem::G1Xyzz,
            Curve::G2 => Elem::G2Xyzz,
        }
    }

    fn jacobian(self) -> Elem {
        match self {
            Curve::G1 => Elem::G1Jacobian,
            Curve::G2 => Elem::G2Jacobian,
        }
    }

    fn field(self) -> Elem {
        match self {
            Curve::G1 => Elem::Fq,
            Curve::G2 => Elem::Fq2,
        }
    }
}

/// Every kernel the backend launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    NttTwiddles,
    NttRadix4Pass,
    NttRadix4Pass512,
    FrMul,
    FrSub,
    FrScale,
    FrQuotient,
    SpmvRows,
    SpmvLongRows,
    R1csCheck,
    /// The scalars that reach the buckets, counted for the MSM's plan.
    MsmDenseCount,
    MsmCount,
    MsmScatter,
    /// The scatter one window after another (`MsmScatter::ByWindow`).
    MsmScatterByWindow,
    ScanBlocks,
    ScanAdd,
    MsmBigPlan,
    Accumulate(Curve),
    AccumulateChunks(Curve),
    /// The sliced accumulation with Y₃'s products reduced together.
    AccumulateChunksFused(Curve),
    ChunkCarries(Curve),
    /// The identity into each empty bucket, for the sliced accumulation.
    EmptyBuckets(Curve),
    BigPieces(Curve),
    BigCombine(Curve),
    BucketReduce(Curve),
    WindowFold(Curve),
    OnesSum(Curve),
    ShiftBases(Curve),
    FixedBase(Curve),
    SubgroupCheck(Curve),
    SubgroupDealCount,
    SubgroupDealScatter,
    SubgroupCheckSums(Curve),
}

impl Kernel {
    pub const ALL: [Kernel; 47] = [
        Kernel::NttTwiddles,
        Kernel::NttRadix4Pass,
        Kernel::NttRadix4Pass512,
        Kernel::FrMul,
        Kernel::FrSub,
        Kernel::FrScale,
        Kernel::FrQuotient,
        Kernel::SpmvRows,
        Kernel::SpmvLongRows,
        Kernel::R1csCheck,
        Kernel::MsmDenseCount,
        Kernel::MsmCount,
        Kernel::MsmScatter,
        Kernel::MsmScatterByWindow,
        Kernel::ScanBlocks,
        Kernel::ScanAdd,
        Kernel::MsmBigPlan,
        Kernel::Accumulate(Curve::G1),
        Kernel::AccumulateChunks(Curve::G1),
        Kernel::AccumulateChunksFused(Curve::G1),
        Kernel::ChunkCarries(Curve::G1),
        Kernel::EmptyBuckets(Curve::G1),
        Kernel::BigPieces(Curve::G1),
        Kernel::BigCombine(Curve::G1),
        Kernel::BucketReduce(Curve::G1),
        Kernel::WindowFold(Curve::G1),
        Kernel::OnesSum(Curve::G1),
        Kernel::ShiftBases(Curve::G1),
        Kernel::Accumulate(Curve::G2),
        Kernel::AccumulateChunks(Curve::G2),
        Kernel::AccumulateChunksFused(Curve::G2),
        Kernel::ChunkCarries(Curve::G2),
        Kernel::EmptyBuckets(Curve::G2),
        Kernel::BigPieces(Curve::G2),
        Kernel::BigCombine(Curve::G2),
        Kernel::BucketReduce(Curve::G2),
        Kernel::WindowFold(Curve::G2),
        Kernel::OnesSum(Curve::G2),
        Kernel::ShiftBases(Curve::G2),
        Kernel::FixedBase(Curve::G1),
        Kernel::FixedBase(Curve::G2),
        Kernel::SubgroupCheck(Curve::G1),
        Kernel::SubgroupCheck(Curve::G2),
        Kernel::SubgroupDealCount,
        Kernel::SubgroupDealScatter,
        Kernel::SubgroupCheckSums(Curve::G1),
        Kernel::SubgroupCheckSums(Curve::G2),
    ];

    /// The kernel's symbol (its `extern "C"` name).
    pub fn name(self) -> &'static str {
        use Curve::{G1, G2};
        match self {
            Kernel::NttTwiddles => "ntt_twiddles",
            Kernel::NttRadix4Pass => "ntt_radix4_pass",
            Kernel::NttRadix4Pass512 => "ntt_radix4_pass_512",
            Kernel::FrMul => "fr_mul",
            Kernel::FrSub => "fr_sub",
            Kernel::FrScale => "fr_scale",
            Kernel::FrQuotient => "fr_quotient",
            Kernel::SpmvRows => "spmv_rows",
            Kernel::SpmvLongRows => "spmv_long_rows",
            Kernel::R1csCheck => "r1cs_check",
            Kernel::MsmDenseCount => "msm_dense_count",
            Kernel::MsmCount => "msm_count",
            Kernel::MsmScatter => "msm_scatter",
            Kernel::MsmScatterByWindow => "msm_scatter_by_window",
            Kernel::ScanBlocks => "scan_blocks",
            Kernel::ScanAdd => "scan_add",
            Kernel::MsmBigPlan => "msm_big_plan",
            Kernel::Accumulate(G1) => "g1_accumulate",
            Kernel::Accumulate(G2) => "g2_accumulate",
            Kernel::AccumulateChunks(G1) => "g1_accumulate_chunks",
            Kernel::AccumulateChunks(G2) => "g2_accumulate_chunks",
            Kernel::AccumulateChunksFused(G1) => "g1_accumulate_chunks_fused",
            Kernel::AccumulateChunksFused(G2) => "g2_accumulate_chunks_fused",
            Kernel::ChunkCarries(G1) => "g1_chunk_carries",
            Kernel::ChunkCarries(G2) => "g2_chunk_carries",
            Kernel::EmptyBuckets(G1) => "g1_empty_buckets",
            Kernel::EmptyBuckets(G2) => "g2_empty_buckets",
            Kernel::BigPieces(G1) => "g1_big_pieces",
            Kernel::BigPieces(G2) => "g2_big_pieces",
            Kernel::BigCombine(G1) => "g1_big_combine",
            Kernel::BigCombine(G2) => "g2_big_combine",
            Kernel::BucketReduce(G1) => "g1_bucket_reduce",
            Kernel::BucketReduce(G2) => "g2_bucket_reduce",
            Kernel::WindowFold(G1) => "g1_window_fold",
            Kernel::WindowFold(G2) => "g2_window_fold",
            Kernel::OnesSum(G1) => "g1_ones_sum",
            Kernel::OnesSum(G2) => "g2_ones_sum",
            Kernel::ShiftBases(G1) => "g1_shift_bases",
            Kernel::ShiftBases(G2) => "g2_shift_bases",
            Kernel::FixedBase(G1) => "g1_fixed_base",
            Kernel::FixedBase(G2) => "g2_fixed_base",
            Kernel::SubgroupCheck(G1) => "g1_subgroup_check",
            Kernel::SubgroupCheck(G2) => "g2_subgroup_check",
            Kernel::SubgroupDealCount => "subgroup_deal_count",
            Kernel::SubgroupDealScatter => "subgroup_deal_scatter",
            Kernel::SubgroupCheckSums(G1) => "g1_subgroup_check_sums",
            Kernel::SubgroupCheckSums(G2) => "g2_subgroup_check_sums",
        }
    }

    /// The program (compile/mod.rs) whose source defines it.
    pub fn program(self) -> &'static str {
        match self {
            Kernel::NttTwiddles
            | Kernel::NttRadix4Pass
            | Kernel::NttRadix4Pass512
            | Kernel::FrMul
            | Kernel::FrSub
            | Kernel::FrScale
            | Kernel::FrQuotient => "ntt",
            Kernel::SpmvRows | Kernel::SpmvLongRows | Kernel::R1csCheck => "r1cs",
            Kernel::MsmDenseCount
            | Kernel::MsmCount
            | Kernel::MsmScatter
            | Kernel::MsmScatterByWindow
            | Kernel::ScanBlocks
            | Kernel::ScanAdd
            | Kernel::MsmBigPlan
            | Kernel::Accumulate(_)
            | Kernel::AccumulateChunks(_)
            | Kernel::AccumulateChunksFused(_)
            | Kernel::ChunkCarries(_)
            | Kernel::EmptyBuckets(_)
            | Kernel::BigPieces(_)
            | Kernel::BigCombine(_)
            | Kernel::BucketReduce(_)
            | Kernel::WindowFold(_)
            | Kernel::OnesSum(_)
            | Kernel::ShiftBases(_) => "msm",
            Kernel::FixedBase(_) => "fixed_base",
            Kernel::SubgroupCheck(_)
            | Kernel::SubgroupDealCount
            | Kernel::SubgroupDealScatter
            | Kernel::SubgroupCheckSums(_) => "subgroup",
        }
    }

    /// The kernel's parameters, in order.
    pub fn params(self) -> Vec<Param> {
        use Elem::{BigBucket, Fr, U32};
        match self {
            Kernel::NttTwiddles => vec![write("tw", Fr), read("hi", Fr), read("lo", Fr), u32("count")],
            Kernel::NttRadix4Pass | Kernel::NttRadix4Pass512 => vec![
                read("in", Fr),
                write("out", Fr),
                read("tw", Fr),
                read("tw_lo", Fr),
                read("roots", Fr),
                u32("log_n"),
                u32("s0"),
                u32("k"),
                u32("log_cols"),
                u32("load_mode"),
                read("load_hi", Fr),
                read("load_lo", Fr),
                u32("store_mode"),
                read("store_hi", Fr),
                read("store_lo", Fr),
            ],
            Kernel::FrMul | Kernel::FrSub => vec![write("a", Fr), read("b", Fr), u32("n")],
            Kernel::FrScale => vec![write("a", Fr), read("c", Fr), u32("n")],
            Kernel::FrQuotient => vec![write("a", Fr), read("b", Fr), read("c", Fr), read("z_inv", Fr), u32("n")],
            Kernel::SpmvRows => vec![
                write("out", Fr),
                read("z", Fr),
                read("m", U32),
                u32("starts"),
                u32("entries"),
                u32("rows"),
                u32("long_row"),
                u32("out_len"),
            ],
            Kernel::SpmvLongRows => vec![
                write("out", Fr),
                read("z", Fr),
                read("m", U32),
                u32("starts"),
                u32("entries"),
                u32("long_rows"),
                u32("long_count"),
            ],
            Kernel::R1csCheck => {
                vec![read("a", Fr), read("b", Fr), read("c", Fr), u32("rows"), write("first", U32)]
            }
            Kernel::MsmDenseCount => vec![read("scalars", Fr), u32("n"), u32("split"), write("count", U32)],
            Kernel::MsmCount => {
                digit_params(&[write("counts", U32), write("ones", U32), write("ones_count", U32), u32("split")])
            }
            Kernel::MsmScatter => digit_params(&[write("cursor", U32), write("sorted", U32), u32("split")]),
            Kernel::MsmScatterByWindow => {
                digit_params(&[write("cursor", U32), write("sorted", U32), u32("split"), u32("per_window")])
            }
            Kernel::ScanBlocks => vec![write("data", U32), u32("n"), write("block_sums", U32)],
            Kernel::ScanAdd => vec![write("data", U32), u32("n"), read("block_offsets", U32)],
            Kernel::MsmBigPlan => vec![
                read("big_list", BigBucket),
                read("big_count", U32),
                u32("piece"),
                write("table", U32),
                write("pieces", U32),
                write("counters", U32),
            ],
            Kernel::Accumulate(c) => vec![
                read("bases", c.affine()),
                read("sorted", U32),
                read("offsets", U32),
                read("counts", U32),
                u32("buckets"),
                u32("big"),
                write("out", c.xyzz()),
                write("big_list", BigBucket),
                write("big_count", U32),
            ],
            Kernel::AccumulateChunks(c) | Kernel::AccumulateChunksFused(c) => accumulate_chunks_params(c),
            Kernel::ChunkCarries(c) => vec![
                read("offsets", U32),
                read("counts", U32),
                u32("buckets"),
                u32("chunk_min"),
                read("tails", U32),
                read("carries", c.xyzz()),
                write("out", c.xyzz()),
            ],
            Kernel::EmptyBuckets(c) => vec![read("counts", U32), u32("buckets"), write("out", c.xyzz())],
            Kernel::BigPieces(c) => vec![
                read("bases", c.affine()),
                read("sorted", U32),
                read("pieces", U32),
                read("counters", U32),
                write("partials", c.xyzz()),
            ],
            Kernel::BigCombine(c) => {
                vec![read("table", U32), read("big_count", U32), read("partials", c.xyzz()), write("buckets", c.xyzz())]
            }
            Kernel::BucketReduce(c) => {
                vec![read("buckets", c.xyzz()), u32("windows"), u32("half"), u32("segments"), write("out", c.xyzz())]
            }
            Kernel::WindowFold(c) => vec![read("segs", c.xyzz()), u32("segments"), write("out", c.xyzz())],
            Kernel::OnesSum(c) => {
                vec![read("bases", c.affine()), read("ones", U32), read("ones_count", U32), write("partials", c.xyzz())]
            }
            Kernel::ShiftBases(c) => vec![
                read("bases", c.affine()),
                u32("len"),
                u32("c"),
                u32("shifts"),
                u32("first"),
                u32("count"),
                write("multiples", c.jacobian()),
                write("products", c.field()),
                write("table", c.affine()),
            ],
            Kernel::FixedBase(c) => vec![
                read("scalars", U32),
                read("table", c.affine()),
                u32("c"),
                u32("windows"),
                u32("per_window"),
                u32("count"),
                u32("threads"),
                write("sums", c.xyzz()),
                write("prefixes", c.field()),
                write("out", c.affine()),
            ],
            Kernel::SubgroupCheck(c) => {
                vec![read("points", c.affine()), u32("count"), read("endo", c.field()), write("first", U32)]
            }
            Kernel::SubgroupDealCount => deal_params(write("counts", U32), None),
            Kernel::SubgroupDealScatter => deal_params(write("cursor", U32), Some(write("sorted", U32))),
            Kernel::SubgroupCheckSums(c) => {
                vec![read("sums", c.xyzz()), u32("count"), read("endo", c.field()), write("first", U32)]
            }
        }
    }

    /// Whether `args` match the kernel's parameters, in count and, one by one, in kind.
    pub(crate) fn check(self, args: &[Arg]) -> Result<(), ArgumentMismatch> {
        let params = self.params();
        if args.len() != params.len() {
            return Err(ArgumentMismatch::Count { given: args.len(), expected: params.len() });
        }
        match params.iter().zip(args).enumerate().find(|(_, (p, a))| !a.matches(p.kind)) {
            Some((index, (p, _))) => Err(ArgumentMismatch::Kind { index, param: p.name, expected: p.kind.wanted() }),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests;
