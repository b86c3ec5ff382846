//! The host's C++ compiler, for the tests that run the kernels' source on the host
//! (`G16_HOST_EMULATION`). Shared by `tests/host_arithmetic.rs` and the NTT's unit tests.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The start of a harness that runs a launch's threads one after another on one host thread
/// (before the kernels' source): the launch's coordinates as variables the harness sets, the
/// kernels' attributes as nothing, and atomicMin and atomicAdd as the plain operations they
/// are there.
#[allow(dead_code)] // reason: unused by the integration tests that include this file
pub const SERIAL_LAUNCH: &str = r#"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
struct EmulatedDim { unsigned x; };
static EmulatedDim threadIdx, blockIdx, blockDim, gridDim;
#define __global__
#define __launch_bounds__(...)
static void atomicMin(unsigned* a, unsigned v) { if (v < *a) *a = v; }
static unsigned atomicAdd(unsigned* a, unsigned v) { unsigned old = *a; *a += v; return old; }
"#;

/// Readers of a harness's input (after the kernels' source, whose types they read): a decimal
/// u32, and `count` items of a kernel type as hex words, with one spare item after them.
#[allow(dead_code)] // reason: unused by the integration tests that include this file
pub const ITEM_READERS: &str = r#"
static unsigned read_u32() { unsigned x; if (scanf("%u", &x) != 1) exit(2); return x; }
template <class T> static std::vector<T> read_items(unsigned count) {
  std::vector<u32> w(count * (sizeof(T) / 4) + 1);
  for (unsigned i = 0; i + 1 < w.size(); i++) if (scanf("%x", &w[i]) != 1) exit(2);
  std::vector<T> v(count + 1);
  memcpy(v.data(), w.data(), count * sizeof(T));
  return v;
}
"#;

/// `$CXX`, else the first of c++, g++, clang++ that runs. None (after saying so loudly) where
/// there is none, unless `G16_REQUIRE_CXX=1`, which makes that a failure.
pub fn compiler_or_skip(what: &str) -> Option<String> {
    let candidates = std::env::var("CXX").ok().into_iter().chain(["c++", "g++", "clang++"].map(String::from));
    let found =
        candidates.into_iter().find(|c| Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()));
    if found.is_none() {
        if std::env::var("G16_REQUIRE_CXX").as_deref() == Ok("1") {
            panic!("a C++ compiler is required (G16_REQUIRE_CXX=1) but none of $CXX, c++, g++, clang++ runs");
        }
        eprintln!("\n!!! SKIPPED: no C++ compiler for {what} (set G16_REQUIRE_CXX=1 to make this a failure)\n");
    }
    found
}

/// Compiles `source` (C++17, with `G16_HOST_EMULATION` defined first; threads linked, for
/// harnesses that run a block's threads as host threads) into the executable `exe`, panicking
/// with the compiler's output if it fails.
pub fn build(cxx: &str, source: &str, exe: &Path, optimise: &str) {
    let cpp = exe.with_extension("cpp");
    std::fs::write(&cpp, format!("#define G16_HOST_EMULATION\n{source}")).expect("write the harness");
    let out = Command::new(cxx)
        .args(["-std=c++17", "-pthread", optimise, "-o"])
        .arg(exe)
        .arg(&cpp)
        .output()
        .expect("run the C++ compiler");
    assert!(out.status.success(), "{cxx} failed:\n{}", String::from_utf8_lossy(&out.stderr));
}

/// [`build`] of `source` (optimised, -O2) into `name` in a new temporary directory of this
/// process and thread, so parallel tests never share one: the directory (for the caller to
/// remove) and the executable. None where there is no compiler ([`compiler_or_skip`], which
/// names `what`).
#[allow(dead_code)] // reason: unused by the integration tests that include this file
pub fn build_in_temp(what: &str, name: &str, source: &str) -> Option<(PathBuf, PathBuf)> {
    let cxx = compiler_or_skip(what)?;
    let dir = std::env::temp_dir().join(format!("g16-{name}-{}-{:?}", std::process::id(), std::thread::current().id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let exe = dir.join(name);
    build(&cxx, source, &exe, "-O2");
    Some((dir, exe))
}

/// Runs `exe` with `input` on its standard input; its standard output. The input is written
/// from another thread: input and output may each be larger than a pipe's buffer.
pub fn run(exe: &Path, input: &str) -> String {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(exe).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("run the harness");
    let mut stdin = child.stdin.take().expect("stdin");
    let out = std::thread::scope(|scope| {
        scope.spawn(move || stdin.write_all(input.as_bytes()).expect("write the input"));
        child.wait_with_output().expect("the harness's output")
    });
    assert!(out.status.success(), "the harness failed: {}", out.status);
    String::from_utf8(out.stdout).expect("utf8")
}
