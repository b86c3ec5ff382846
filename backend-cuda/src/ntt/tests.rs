use super::*;

const BLOCKS: [NttBlock; 2] = [NttBlock::Elems1024, NttBlock::Elems512];

#[test]
fn passes_cover_every_stage_within_the_block() {
    for block in BLOCKS {
        let one_pass = ROOTS_LOG.min(block.elems().trailing_zeros());
        for log_n in 1..=31 {
            let passes = plan_passes(log_n, block.elems());
            assert_eq!(passes.iter().sum::<u32>(), log_n, "2^{log_n}: {passes:?}");
            let most = if passes.len() == 1 { one_pass } else { MAX_PASS_STAGES };
            assert!(passes.iter().all(|&k| (1..=most).contains(&k)), "{block:?}: {passes:?}");
        }
    }
}

#[test]
fn constants_agree_with_the_kernel_source() {
    let source = crate::compile::NTT.text;
    for (name, value) in [
        ("NTT_SPLIT", SPLIT),
        ("NTT_BLOCK_ELEMS", NttBlock::Elems1024.elems()),
        ("NTT_SMALL_BLOCK_ELEMS", NttBlock::Elems512.elems()),
        ("NTT_ROOTS_LOG", ROOTS_LOG),
        ("NTT_LOG_RADIX", LOG_RADIX),
    ] {
        assert!(source.contains(&format!("#define {name} {value}\n")), "ntt.cu: #define {name} {value}");
    }
    for block in BLOCKS {
        let pass = pass_kernel(block).name();
        assert!(source.contains(&format!("NTT_PASS_KERNEL({pass}, ")), "ntt.cu defines {pass}");
    }
}

#[test]
fn launches_tile_the_array_and_fit_the_tile() {
    for block in BLOCKS {
        for log_n in 1..=31 {
            let launches = plan_launches(log_n, block.elems());
            let mut s0 = 0;
            for l in &launches {
                assert_eq!(l.s0, s0, "2^{log_n}: {launches:?}");
                let (cols, rows) = (1u64 << l.log_cols, 1u64 << l.k);
                assert_eq!(u64::from(l.blocks) * cols * rows, 1u64 << log_n, "{launches:?}");
                assert!(cols * rows <= u64::from(block.elems()), "{block:?}: {launches:?}");
                // A block's columns lie inside one group (later passes) or the input matrix (first).
                let available = if s0 == 0 { log_n - l.k } else { s0 };
                assert!(l.log_cols <= available, "{launches:?}");
                s0 += l.k;
            }
            assert_eq!(s0, log_n);
            // Rows of at least 64 bytes (2 columns) are read and written whole sectors at a time.
            let least = if block == NttBlock::Elems1024 { 2 } else { 1 };
            if log_n >= 12 {
                assert!(launches.iter().all(|l| l.log_cols >= least), "coalesced: {block:?} {launches:?}");
            }
        }
    }
}

#[test]
fn split_tables_give_every_power() {
    let base = Fr::from(5u64);
    let scale = Fr::from(3u64);
    for n in [2usize, 4096, 1 << 14] {
        let (hi, lo) = split_table(base, scale, n);
        for i in [0usize, 1, n / 2, n - 1] {
            let got = hi[i >> SPLIT] * lo[i & ((1 << SPLIT) - 1)];
            assert_eq!(got, scale * base.pow([i as u64]), "n={n} i={i}");
        }
    }
}

/// `kernels/ntt/ntt.cu` run on the host: fp.cuh and ntt.cu compiled by the host's C++ compiler
/// (`G16_HOST_EMULATION`), each launch of `plan_launches` run block by block with one thread a
/// block (the kernel strides by blockDim.x, so one thread does a block's work in order and the
/// barriers have nothing to wait for), against the CPU backend (arkworks). This checks the
/// passes' index arithmetic, twiddles and orders without a GPU; the GPU suite checks the same
/// kernel on the device. Without a C++ compiler it says so loudly and passes, unless
/// `G16_REQUIRE_CXX=1`.
mod host_emulation {
    use super::*;
    use crate::cxx;
    use g16_backend::sample::{random_scalars, test_rng};
    use g16_backend::{Backend, CpuBackend};

    const HARNESS: &str = r#"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
using std::min;
struct EmulatedDim { unsigned x; };
static EmulatedDim threadIdx, blockIdx, blockDim, gridDim;
#define __global__
#define __shared__ static
#define __syncthreads() ((void)0)
#define __launch_bounds__(...)
struct uint4 { unsigned x, y, z, w; };
static unsigned __brev(unsigned x) { unsigned r = 0; for (int i = 0; i < 32; i++, x >>= 1) r = (r << 1) | (x & 1); return r; }
"#;

    const MAIN: &str = r#"
static std::vector<Fr> read_frs() {
  unsigned count;
  if (scanf("%u", &count) != 1) exit(2);
  std::vector<Fr> v(count ? count : 1);
  for (unsigned i = 0; i < count; i++) for (int j = 0; j < Fr::N; j++) if (scanf("%x", &v[i].l[j]) != 1) exit(2);
  return v;
}
int main() {
  unsigned log_n, load_mode, store_mode, passes, split, small_block;
  if (scanf("%u %u %u %u %u %u", &log_n, &load_mode, &store_mode, &passes, &split, &small_block) != 6) return 2;
  std::vector<Fr> a = read_frs(), tw = read_frs(), tw_lo = read_frs(), roots = read_frs();
  std::vector<Fr> load_hi = read_frs(), load_lo = read_frs(), store_hi = read_frs(), store_lo = read_frs();
  std::vector<Fr> b(a.size());
  for (unsigned i = 0; i < passes; i++) {
    unsigned s0, k, log_cols, blocks;
    if (scanf("%u %u %u %u", &s0, &k, &log_cols, &blocks) != 4) return 2;
    const bool first = i == 0, last = i + 1 == passes;
    blockDim.x = 1; threadIdx.x = 0; gridDim.x = blocks;
    for (unsigned blk = 0; blk < blocks; blk++) {
      blockIdx.x = blk;
      auto pass = small_block ? ntt_radix4_pass_512 : ntt_radix4_pass;
      pass(a.data(), b.data(), tw.data(), split ? tw_lo.data() : nullptr, roots.data(), log_n, s0, k, log_cols,
           first ? load_mode : 0, load_hi.data(), load_lo.data(), last ? store_mode : 0, store_hi.data(),
           store_lo.data());
    }
    a.swap(b);
  }
  for (const Fr& x : a) { for (int j = 0; j < Fr::N; j++) printf("%x ", x.l[j]); printf("\n"); }
  return 0;
}
"#;

    fn push_frs(input: &mut String, values: &[Fr]) {
        input.push_str(&format!("{}\n", values.len()));
        for w in words(values) {
            input.push_str(&format!("{w:x} "));
        }
        input.push('\n');
    }

    /// Runs the emulated kernel passes of one NTT, with the tables `Ntt::tables` builds on
    /// the device in twiddle layout `layout`, in blocks of `block`.
    fn emulated_ntt(
        exe: &std::path::Path,
        input: &[Fr],
        kind: NttKind,
        layout: NttTwiddles,
        block: NttBlock,
    ) -> Vec<Fr> {
        let n = input.len();
        let log_n = n.trailing_zeros();
        let omega = Fr::get_root_of_unity(n as u64).expect("root");
        let omega = if kind.is_inverse() { omega.inverse().expect("inverse") } else { omega };
        let (tw, tw_lo) = match layout {
            NttTwiddles::Table => {
                (std::iter::successors(Some(Fr::ONE), |x| Some(*x * omega)).take((n / 2).max(1)).collect(), Vec::new())
            }
            NttTwiddles::Split => split_table(omega, Fr::ONE, n),
        };
        let n_inv = Fr::from(n as u64).inverse().expect("n⁻¹");
        let g = Fr::GENERATOR;
        let none = (Vec::new(), Vec::new());
        let (load, store) = match kind {
            NttKind::Forward => (none.clone(), none),
            NttKind::Inverse => (none, split_table(Fr::ONE, n_inv, n)),
            NttKind::CosetForward => (split_table(g, Fr::ONE, n), none),
            NttKind::CosetInverse => (none, split_table(g.inverse().expect("g⁻¹"), n_inv, n)),
            NttKind::OddCosetForward => {
                (split_table(Fr::get_root_of_unity(2 * n as u64).expect("ω₂ₙ"), Fr::ONE, n), none)
            }
        };
        let modes = ScaleModes::of(kind);
        let launches = plan_launches(log_n, block.elems());
        let split = u32::from(layout == NttTwiddles::Split);
        let small = u32::from(block == NttBlock::Elems512);
        let mut text = format!("{log_n} {} {} {} {split} {small}\n", modes.load, modes.store, launches.len());
        for table in [input, &tw, &tw_lo, &butterfly_roots(kind.is_inverse()), &load.0, &load.1, &store.0, &store.1] {
            push_frs(&mut text, table);
        }
        for l in &launches {
            text.push_str(&format!("{} {} {} {}\n", l.s0, l.k, l.log_cols, l.blocks));
        }
        cxx::run(exe, &text)
            .lines()
            .map(|line| {
                let w: Vec<u32> = line.split_whitespace().map(|x| u32::from_str_radix(x, 16).expect("hex")).collect();
                g16_backend::limbs::fr_from_words(&w)
            })
            .collect()
    }

    #[test]
    fn kernel_passes_match_arkworks_on_the_host() {
        let Some(cxx) = cxx::compiler_or_skip("the host-emulated NTT kernel") else { return };
        let dir = std::env::temp_dir().join(format!("g16-host-ntt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let exe = dir.join("ntt_harness");
        let kernel = crate::compile::unit(&[crate::compile::FP, crate::compile::NTT]);
        cxx::build(&cxx, &format!("{HARNESS}\n{kernel}\n{MAIN}"), &exe, "-O2");
        let mut rng = test_rng("kernel_passes_match_arkworks_on_the_host");
        let cpu = CpuBackend::new();
        // One pass (1 … 10, or 9 in blocks of 512), two (to 16), three (17): every round shape
        // and pass position, in both twiddle layouts (split tables of one and of several high
        // entries) and both blocks.
        for log_n in (1..=14).chain([17]) {
            let input = random_scalars(1 << log_n, &mut rng);
            for kind in NttKind::ALL {
                let mut want = cpu.upload_scalars(&input).expect("upload");
                cpu.ntt(&mut want, kind).expect("the CPU's NTT");
                let want = cpu.download_scalars(&want).expect("download");
                for layout in [NttTwiddles::Table, NttTwiddles::Split] {
                    for block in BLOCKS {
                        let got = emulated_ntt(&exe, &input, kind, layout, block);
                        assert!(
                            got == want,
                            "{kind:?} of 2^{log_n}, {layout:?} twiddles, {block:?}: differs from arkworks"
                        );
                    }
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
