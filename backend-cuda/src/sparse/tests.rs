use super::*;
use ark_ff::{Field, UniformRand, Zero};
use g16_backend::sparse::packed::{SLOT_MINUS_ONE, SLOT_ONE};
use g16_backend::Fr;
use rand::Rng;
use rand_chacha::ChaCha20Rng;

#[test]
fn constants_agree_with_the_kernel_source() {
    let source = crate::compile::SPMV.text;
    for (name, value) in [
        ("SPMV_SLOT_ONE", format!("{SLOT_ONE:#010x}u")),
        ("SPMV_SLOT_MINUS_ONE", format!("{SLOT_MINUS_ONE:#010x}u")),
        ("SPMV_LONG_THREADS", LONG_THREADS.to_string()),
    ] {
        assert!(source.contains(&format!("#define {name} {value}\n")), "spmv.cu: #define {name} {value}");
    }
    assert!(LONG_THREADS.is_power_of_two(), "the tree halves the block");
}

/// Rows of a compiled circuit's shape: mostly 0–5 entries, every 97th row 1000 entries (a hash
/// circuit's packing row), some just past [`LONG_ROW`], a repeated column; coefficients 0, 1,
/// −1, one shared value and random ones.
fn circuit_rows(rows: usize, columns: usize, rng: &mut ChaCha20Rng) -> Vec<Vec<(Fr, usize)>> {
    let shared = Fr::rand(rng);
    (0..rows)
        .map(|r| {
            let len = match r % 97 {
                1 => 1000,
                2 => LONG_ROW as usize + 1,
                3 => LONG_ROW as usize,
                _ => rng.gen_range(0..6),
            };
            let mut row: Vec<(Fr, usize)> = (0..len)
                .map(|_| {
                    let k = match rng.gen_range(0..7u32) {
                        0 => Fr::zero(),
                        1 | 2 => Fr::ONE,
                        3 => -Fr::ONE,
                        4 => shared,
                        _ => Fr::rand(rng),
                    };
                    (k, rng.gen_range(0..columns))
                })
                .collect();
            if row.len() > 1 {
                row[1].1 = row[0].1;
            }
            row
        })
        .collect()
}

/// `kernels/r1cs/` run on the host: fp.cuh, spmv.cu and check.cu compiled by the host's C++
/// compiler (`G16_HOST_EMULATION`), every block of a launch run in turn with its threads as
/// host threads (`__syncthreads()` a barrier between them), against
/// `SparseMatrix::mul_vector_into` and the host's check. This checks the kernels' indexing of
/// the packed words, the ±1 slots, the long rows' strided sums and tree, the zeroed tail and
/// the check's atomic minimum without a GPU; the GPU suite checks the same kernels on the
/// device. Without a C++ compiler it says so loudly and passes, unless `G16_REQUIRE_CXX=1`.
mod host_emulation {
    use super::*;
    use crate::cxx;
    use g16_backend::limbs::{fr_from_words, fr_to_words, FR_WORDS};
    use g16_backend::sample::{random_scalars, test_rng};

    const HARNESS: &str = r#"
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>
struct EmulatedDim { unsigned x; };
static thread_local EmulatedDim threadIdx;
static EmulatedDim blockIdx, blockDim, gridDim;
// The threads of the running block meet here at each __syncthreads().
struct BlockBarrier {
  std::mutex m;
  std::condition_variable cv;
  unsigned waiting = 0, generation = 0;
  void wait() {
    std::unique_lock<std::mutex> lock(m);
    const unsigned g = generation;
    if (++waiting == blockDim.x) { waiting = 0; generation++; cv.notify_all(); }
    else cv.wait(lock, [&] { return generation != g; });
  }
};
static BlockBarrier block_barrier;
static std::mutex atomic_lock;
#define __global__
#define __shared__ static
#define __syncthreads() block_barrier.wait()
#define __launch_bounds__(...)
static unsigned atomicMin(unsigned* p, unsigned v) {
  std::lock_guard<std::mutex> guard(atomic_lock);
  const unsigned old = *p;
  if (v < old) *p = v;
  return old;
}
"#;

    const MAIN: &str = r#"
static unsigned read_u32() { unsigned x; if (scanf("%u", &x) != 1) exit(2); return x; }
static std::vector<u32> read_words() {
  const unsigned count = read_u32();
  std::vector<u32> v(count ? count : 1);
  for (unsigned i = 0; i < count; i++) if (scanf("%x", &v[i]) != 1) exit(2);
  return v;
}
static std::vector<Fr> read_frs() {
  const std::vector<u32> w = read_words();
  std::vector<Fr> v(w.size() / Fr::N + 1);
  memcpy(v.data(), w.data(), w.size() / Fr::N * sizeof(Fr));
  return v;
}
// Every block in turn; a block's threads on host threads (one thread: this one).
template <class Kernel> static void launch(unsigned grid, unsigned block, Kernel kernel) {
  gridDim.x = grid; blockDim.x = block;
  for (unsigned b = 0; b < grid; b++) {
    blockIdx.x = b;
    if (block == 1) { threadIdx.x = 0; kernel(); continue; }
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < block; t++) threads.emplace_back([&kernel, t] { threadIdx.x = t; kernel(); });
    for (std::thread& th : threads) th.join();
  }
}
int main() {
  char mode[8];
  if (scanf("%7s", mode) != 1) return 2;
  if (!strcmp(mode, "spmv")) {
    const unsigned starts = read_u32(), entries = read_u32(), rows = read_u32(), long_row = read_u32();
    const unsigned long_rows = read_u32(), long_count = read_u32(), out_len = read_u32();
    const unsigned rows_grid = read_u32(), rows_block = read_u32(), long_grid = read_u32(), long_block = read_u32();
    std::vector<u32> m = read_words();
    std::vector<Fr> z = read_frs(), out = read_frs();
    launch(rows_grid, rows_block, [&] { spmv_rows(out.data(), z.data(), m.data(), starts, entries, rows, long_row, out_len); });
    launch(long_grid, long_block, [&] { spmv_long_rows(out.data(), z.data(), m.data(), starts, entries, long_rows, long_count); });
    for (unsigned i = 0; i < out_len; i++) { for (int j = 0; j < Fr::N; j++) printf("%x ", out[i].l[j]); printf("\n"); }
  } else {
    const unsigned rows = read_u32(), grid = read_u32(), block = read_u32();
    std::vector<Fr> a = read_frs(), b = read_frs(), c = read_frs();
    u32 first = 0xffffffffu;
    launch(grid, block, [&] { r1cs_check(a.data(), b.data(), c.data(), rows, &first); });
    printf("%u\n", first);
  }
  return 0;
}
"#;

    fn push_words(input: &mut String, words: &[u32]) {
        input.push_str(&format!("{}\n", words.len()));
        for w in words {
            input.push_str(&format!("{w:x} "));
        }
        input.push('\n');
    }

    fn push_frs(input: &mut String, values: &[Fr]) {
        let mut w = vec![0u32; values.len() * FR_WORDS];
        for (v, out) in values.iter().zip(w.chunks_mut(FR_WORDS)) {
            fr_to_words(v, out);
        }
        push_words(input, &w);
    }

    /// The emulated product of `p` and `z` into `out_len` rows that start as garbage, launched
    /// as (grid, block) for the short rows and for the long ones.
    fn emulated_spmv(
        exe: &std::path::Path,
        p: &PackedMatrix,
        z: &[Fr],
        garbage: &[Fr],
        short: (u32, u32),
        long: (u32, u32),
    ) -> Vec<Fr> {
        let l = p.layout;
        let mut text = format!(
            "spmv {} {} {} {} {} {} {}\n{} {} {} {}\n",
            l.starts,
            l.entries,
            l.rows,
            l.long_row,
            l.long_rows,
            l.long_count,
            garbage.len(),
            short.0,
            short.1,
            long.0,
            long.1
        );
        push_words(&mut text, &p.words);
        push_frs(&mut text, z);
        push_frs(&mut text, garbage);
        cxx::run(exe, &text)
            .lines()
            .map(|line| {
                let w: Vec<u32> = line.split_whitespace().map(|x| u32::from_str_radix(x, 16).expect("hex")).collect();
                fr_from_words(&w)
            })
            .collect()
    }

    fn emulated_check(exe: &std::path::Path, (a, b, c): (&[Fr], &[Fr], &[Fr]), rows: usize, grid: u32) -> u32 {
        let mut text = format!("check {rows} {grid} 1\n");
        for v in [a, b, c] {
            push_frs(&mut text, v);
        }
        cxx::run(exe, &text).trim().parse().expect("a row")
    }

    fn build() -> Option<(std::path::PathBuf, std::path::PathBuf)> {
        let cxx = cxx::compiler_or_skip("the host-emulated sparse kernels")?;
        let dir = std::env::temp_dir().join(format!(
            "g16-host-r1cs-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let exe = dir.join("r1cs_harness");
        let kernels = crate::compile::unit(&[crate::compile::FP, crate::compile::SPMV, crate::compile::CHECK]);
        cxx::build(&cxx, &format!("{HARNESS}\n{kernels}\n{MAIN}"), &exe, "-O2");
        Some((dir, exe))
    }

    #[test]
    fn spmv_kernels_match_the_host_product() {
        let Some((dir, exe)) = build() else { return };
        let mut rng = test_rng("spmv_kernels_match_the_host_product");
        // (rows, columns, out_len): an empty matrix, a narrow one over a longer output, and
        // one with every kind of row.
        for (rows, columns, out_len) in [(0usize, 3usize, 5usize), (5, 3, 8), (1000, 700, 1100)] {
            let data = circuit_rows(rows, columns, &mut rng);
            let m = SparseMatrix::from_rows(columns, data.iter().map(Vec::as_slice)).expect("matrix");
            let p = PackedMatrix::new(&m, LONG_ROW).expect("packed");
            let z = random_scalars(columns, &mut rng);
            let mut want = vec![Fr::zero(); out_len];
            m.mul_vector_into(&z, &mut want);
            let garbage = random_scalars(out_len, &mut rng);
            // The device's geometry, fewer blocks than rows (the loops stride), and one thread.
            let short = [(blocks(out_len, THREADS), THREADS), (3, 7), (1, 1)];
            let long = [(blocks(p.layout.long_count as usize, 1), LONG_THREADS), (2, LONG_THREADS), (1, 1)];
            for (s, l) in short.into_iter().zip(long) {
                let got = emulated_spmv(&exe, &p, &z, &garbage, s, l);
                assert!(got == want, "{rows}x{columns} into {out_len}, short {s:?}, long {l:?}");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn check_kernel_finds_the_first_failing_row() {
        let Some((dir, exe)) = build() else { return };
        let mut rng = test_rng("check_kernel_finds_the_first_failing_row");
        let n = 3000;
        let a = random_scalars(n, &mut rng);
        let b = random_scalars(n, &mut rng);
        let c: Vec<Fr> = a.iter().zip(&b).map(|(x, y)| *x * y).collect();
        for grid in [1, 5, blocks(n, THREADS)] {
            assert_eq!(emulated_check(&exe, (&a, &b, &c), n, grid), u32::MAX, "satisfied, grid {grid}");
            for first in [0, 1, 1234, n - 1] {
                let mut broken = c.clone();
                broken[first] += Fr::ONE;
                for later in [first + 5, first + 2 * grid as usize, n - 1] {
                    if later > first && later < n {
                        broken[later] -= Fr::ONE;
                    }
                }
                let got = emulated_check(&exe, (&a, &b, &broken), n, grid);
                assert_eq!(got, first as u32, "grid {grid}");
                assert_eq!(emulated_check(&exe, (&a, &b, &broken), first, grid), u32::MAX, "rows below {first}");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
