#!/usr/bin/env bash
# The wgpu backend on the GPU machine (H200 through Vulkan), for the lead's device runs.
#
# That machine has no Rust: build here first, then carry the binaries in .device/:
#
#   cargo build --release --bin g16
#   cargo build --release -p g16-wgpu --example pipelines --example first_run
#   cargo test --release --test backend_wgpu --no-run            # prints the test binary's path
#   cargo test --release -p g16-wgpu --test engine --no-run       # likewise
#   mkdir -p .device
#   cp target/release/g16                            .device/g16
#   cp target/release/examples/pipelines             .device/wgpu_pipelines
#   cp target/release/examples/first_run             .device/wgpu_first_run
#   cp target/release/deps/backend_wgpu-<hash>       .device/backend_wgpu
#   cp target/release/deps/engine-<hash>             .device/wgpu_engine
#
# and the Vulkan loader debs in .gl/ (/work/.library/device/README.md, "bring the loaders").
# Then, one stage per call (each fits the 10-minute limit), carrying .device and .gl:
#
#   bash backend-wgpu/device-run.sh setup        # loaders, `g16 devices`, pipeline creation (cold)
#   bash backend-wgpu/device-run.sh conformance  # the suite at G16_CONFORMANCE=large, both paths
#   bash backend-wgpu/device-run.sh bench        # g16 bench wgpu vs cpu -> $OUT/wgpu-h200.jsonl
#   bash backend-wgpu/device-run.sh prove        # g16 prove --backend wgpu --trace $OUT/t.json
#
# `all` runs every stage in turn (more than 10 minutes: only with a longer limit).
#
# `s2` is the one-call version (binaries in .device/wgpu, G16_DEV=.device/wgpu, with
# cache/cuda filled ahead by `G16_CACHE_DIR=.device/wgpu/cache cargo run --release -p g16-cuda
# --example fill_cache -- sm_90`): pipelines, benchmarks against CUDA and the CPU, the traced
# proof, the large suite. Its first run (2026-11-30) needed more than 5 minutes: what it got to
# is in benches/results/h200-wgpu-s2*.
set -uo pipefail
# The repository root (the script may also run from a copy under .device/).
[ -d backend-wgpu ] || cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/g16-out}
mkdir -p "$OUT"
# Keys and the pipeline cache stay off $OUT (a 2^20 key is hundreds of MB).
export G16_REQUIRE_WGPU=1 G16_CACHE_DIR=/tmp/g16-cache RUST_BACKTRACE=1

loaders() {
    if ! ldconfig -p | grep -q libvulkan; then
        for f in .gl/*.deb; do dpkg -x "$f" /; done
        ldconfig
    fi
    if ! ${G16_DEV:-.device}/g16 devices 2>/dev/null | grep -q "wgpu  available"; then
        export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
        export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
    fi
}

setup() {
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/gpu.txt"
    .device/g16 devices | tee "$OUT/devices.txt"
    # Pipeline creation, cold (no pipeline cache yet), then warm (the cache written by the first).
    for path in "" --u32; do
        echo "== pipelines $path (cold: no pipeline cache, no driver cache)"
        G16_NO_PIPELINE_CACHE=1 __GL_SHADER_DISK_CACHE=0 .device/wgpu_pipelines $path | tee -a "$OUT/pipelines.txt"
        echo "== pipelines $path (pipeline cache)"; .device/wgpu_pipelines $path | tee -a "$OUT/pipelines.txt"
        echo "== first and second runs $path"; .device/wgpu_first_run 262144 $path | tee -a "$OUT/first_run.txt"
    done
}

conformance() {
    # Large sizes: NTT to 2^24, MSM G1 to 2^24, G2 to 2^20, proofs to 2^16; both paths
    # (the u32_path module forces 32-bit limbs). One test at a time: each holds GiBs.
    # A test-name filter as the second argument splits the run over calls if it needs more than
    # 10 minutes (e.g. `conformance msm_g1`, `conformance u32_path`).
    local d=${G16_DEV:-.device}
    G16_CONFORMANCE=large $d/backend_wgpu --test-threads 1 ${FILTER:-} 2>&1 | tee -a "$OUT/conformance.txt"
    [ -z "${FILTER:-}" ] && [ -x $d/wgpu_engine ] && $d/wgpu_engine --test-threads 1 2>&1 | tee "$OUT/engine.txt"
}

bench() {
    local j="$OUT/wgpu-h200.jsonl"
    .device/g16 bench --backends wgpu,cpu --ops msm-g1 --sizes 20..22 --runs 5 --json "$j" --plot "$OUT/msm-g1.svg"
    .device/g16 bench --backends wgpu,cpu --ops msm-g2 --sizes 20 --runs 5 --json "$j" --plot "$OUT/msm-g2.svg"
    .device/g16 bench --backends wgpu,cpu --ops ntt --sizes 22..24 --runs 5 --json "$j" --plot "$OUT/ntt.svg"
    .device/g16 bench --backends wgpu,cpu --ops prove --sizes 20 --runs 3 --json "$j" --plot "$OUT/prove.svg"
}

prove() {
    .device/g16 prove --backend wgpu --circuit synthetic --size 20 --trace "$OUT/t.json" --timeline "$OUT/t.txt" \
        | tee "$OUT/prove.txt"
    G16_WGPU_ARITH=u32 .device/g16 prove --backend wgpu --circuit synthetic --size 18 --json | tee "$OUT/prove-u32.json"
}

# Everything in one call (the session's device share is short), most important first, every
# step under its own timeout so one slow step cannot starve the rest: pipeline creation cold
# and warm on both formula paths, the benchmarks against CUDA and the CPU (one `g16 bench` per
# case, so each writes its JSON before the next starts), the traced proof, then the large
# conformance suite on both formula paths. Binaries and caches come from .device/wgpu
# (G16_DEV=.device/wgpu; its cache/cuda holds the CUDA kernels compiled ahead for sm_90).
stage2() {
    local d=${G16_DEV:-.device/wgpu} j="$OUT/h200-wgpu-s2.jsonl"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/gpu.txt"
    $d/g16 devices | tee "$OUT/devices.txt"
    for f in plain interpreted; do
        rm -rf /tmp/pc-$f
        for run in cold warm; do
            echo "== pipelines, $f formulas, $run" | tee -a "$OUT/pipelines.txt"
            # The plain path's G2 module took over 45 s on the H200 (benches/results/h200-wgpu-s2-pipelines.txt).
            G16_CACHE_DIR=/tmp/pc-$f G16_WGPU_FORMULAS=$f __GL_SHADER_DISK_CACHE=0 timeout 90 $d/wgpu_pipelines \
                2>&1 | tee -a "$OUT/pipelines.txt"
        done
    done
    export G16_CACHE_DIR=/tmp/g16-cache
    mkdir -p $G16_CACHE_DIR && cp -r $d/cache/cuda $G16_CACHE_DIR/ 2>/dev/null
    b() { timeout "$1" $d/g16 bench --no-plot --json "$j" "${@:2}" 2>&1 | grep -v "^\s*$" | tee -a "$OUT/bench.txt"; }
    b 90 --backends wgpu,cuda,cpu --ops msm-g1 --sizes 20 --runs 5
    # The default is the interpreter; the plain formula path for comparison.
    G16_WGPU_FORMULAS=plain b 90 --backends wgpu --ops msm-g1 --sizes 20 --runs 3
    b 60 --backends wgpu,cuda --ops msm-g1 --sizes 22 --runs 5
    b 60 --backends cpu --ops msm-g1 --sizes 22 --runs 3 --warmup 1
    b 60 --backends wgpu,cuda,cpu --ops msm-g2 --sizes 20 --runs 3 --warmup 1
    b 60 --backends wgpu,cuda,cpu --ops ntt --sizes 22 --runs 5
    b 60 --backends wgpu,cuda,cpu --ops ntt --sizes 24 --runs 3 --warmup 1
    timeout 100 $d/g16 prove --backend wgpu --circuit synthetic --size 20 --trace "$OUT/t.json" \
        2>&1 | tee "$OUT/prove.txt"
    # The default formula path (plain on a GPU) at the large sizes; then the interpreter's MSMs.
    G16_CONFORMANCE=large timeout 100 $d/backend_wgpu --test-threads 1 --skip u32 --skip other_formulas \
        2>&1 | tee "$OUT/conformance.txt"
    b 60 --backends wgpu,cuda,cpu --ops prove --sizes 20 --runs 2 --warmup 1
    G16_WGPU_FORMULAS=plain G16_CONFORMANCE=large timeout 120 $d/backend_wgpu --test-threads 1 msm_g \
        --skip u32 2>&1 | tee -a "$OUT/conformance.txt"
}

# Session 3, call 1 (experiment): the straight-line field code's effect on the H200 — pipeline
# creation cold and warm, the wgpu cases with their phase split, the window-size A/B at 2^20,
# the MSM conformance tests at CI sizes, and a CUDA check (its kernel cache and NVRTC).
stage3a() {
    local d=${G16_DEV:-.device/wgpu} j="$OUT/h200-wgpu-s3a.jsonl" log="$OUT/s3a.txt"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | tee -a "$log"
    $d/g16 devices 2>&1 | tee -a "$log"
    rm -rf /tmp/pc
    for run in cold warm; do
        echo "== pipelines, $run" | tee -a "$log"
        G16_CACHE_DIR=/tmp/pc __GL_SHADER_DISK_CACHE=0 timeout 40 $d/wgpu_pipelines 2>&1 | tee -a "$log"
    done
    cuda_env
    b() { timeout "$1" $d/g16 bench --no-plot --json "$j" "${@:2}" 2>&1 | grep -v "^\s*$" | tee -a "$log"; }
    b 40 --backends wgpu --ops msm-g1 --sizes 20 --runs 3
    b 60 --backends wgpu --ops msm-g1 --sizes 22 --runs 3
    b 40 --backends wgpu --ops msm-g2 --sizes 20 --runs 3
    b 30 --backends wgpu --ops ntt --sizes 22 --runs 3
    b 40 --backends wgpu --ops ntt --sizes 24 --runs 3
    echo "== window 17 (the old choice at 2^20)" | tee -a "$log"
    G16_WGPU_MSM_WINDOW=17 b 30 --backends wgpu --ops msm-g1 --sizes 20 --runs 3
    echo "== MSM conformance, CI sizes" | tee -a "$log"
    timeout 60 $d/backend_wgpu --test-threads 1 msm_ --skip u32 --skip plain 2>&1 | tee -a "$log"
    b 30 --backends cuda --ops msm-g1 --sizes 20 --runs 3
}

# Session 3, call 2 (final code and defaults), in the order of what the issue needs most, each
# step under its own timeout: pipeline creation cold and warm; wgpu against CUDA (MSM G1 2^20,
# 2^22, G2 2^20, NTT 2^22, 2^24), the CPU at MSM G1 2^22 (the 10x target); the traced proof of
# synthetic 2^20 and its report, with the same proof on CUDA; the large conformance suite;
# then the CPU's other cases. Logs: s3.txt (everything), suite.txt, prove-report.txt.
stage3() {
    local d=${G16_DEV:-.device/wgpu} j="$OUT/h200-wgpu-s3.jsonl" log="$OUT/s3.txt"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | tee -a "$log"
    $d/g16 devices 2>&1 | tee -a "$log"
    rm -rf /tmp/pc
    for run in cold warm; do
        echo "== pipelines, $run" | tee -a "$log"
        G16_CACHE_DIR=/tmp/pc __GL_SHADER_DISK_CACHE=0 timeout 30 $d/wgpu_pipelines 2>&1 | tee -a "$log"
    done
    cuda_env
    b() { timeout "$1" $d/g16 bench --no-plot --json "$j" "${@:2}" 2>&1 | grep -v "^\s*$" | tee -a "$log"; }
    b 30 --backends wgpu,cuda --ops msm-g1 --sizes 20 --runs 5
    b 40 --backends wgpu,cuda --ops msm-g1 --sizes 22 --runs 5
    b 30 --backends wgpu,cuda --ops msm-g2 --sizes 20 --runs 5
    b 20 --backends wgpu,cuda --ops ntt --sizes 22 --runs 5
    b 30 --backends wgpu,cuda --ops ntt --sizes 24 --runs 3
    b 45 --backends cpu --ops msm-g1 --sizes 22 --runs 3 --warmup 0
    echo "== prove synthetic 2^20, wgpu, traced" | tee -a "$log"
    timeout 90 $d/g16 prove --backend wgpu --circuit synthetic --size 20 --partitions 3 --trace /tmp/t.json \
        --json 2>&1 | tee -a "$log"
    $d/g16 timeline report /tmp/t.json 2>&1 | tee "$OUT/prove-report.txt" | tee -a "$log" | head -60
    gzip -c /tmp/t.json > "$OUT/h200-wgpu-prove20-trace.json.gz"
    echo "== prove synthetic 2^20, cuda" | tee -a "$log"
    timeout 30 $d/g16 prove --backend cuda --circuit synthetic --size 20 --partitions 3 --json 2>&1 \
        | tail -3 | tee -a "$log"
    echo "== conformance, G16_CONFORMANCE=large, default path" | tee -a "$log"
    G16_CONFORMANCE=large timeout 150 $d/backend_wgpu --test-threads 1 --skip u32 --skip plain 2>&1 \
        | tee "$OUT/suite.txt" | tee -a "$log"
    b 20 --backends cpu --ops msm-g1 --sizes 20 --runs 3 --warmup 0
    b 25 --backends cpu --ops msm-g2 --sizes 20 --runs 3 --warmup 0
    b 20 --backends cpu --ops ntt --sizes 22 --runs 3 --warmup 0
    b 20 --backends cpu --ops ntt --sizes 24 --runs 3 --warmup 0
}

# Session 4, call 2 (final code and defaults), every step under its own timeout: pipeline
# creation cold; MSM G1 2^20, 2^22 and G2 2^20 against CUDA in the same run (one `g16 bench`
# each); the large conformance suite on the default path, split by test name so that a slow
# test cannot starve the others (shortest first; msm_g1, to 2^24 against arkworks, last).
# Files: s4.txt (the log, with each step's seconds), h200-wgpu-s4.jsonl, suite.txt.
stage4() {
    local d=${G16_DEV:-.device/wgpu} j="$OUT/h200-wgpu-s4.jsonl" log="$OUT/s4.txt" suite="$OUT/suite.txt"
    local t0=$SECONDS
    step() { echo "== [$((SECONDS - t0)) s] $*" | tee -a "$log"; }
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | tee -a "$log"
    $d/g16 devices 2>&1 | tee -a "$log"
    rm -rf /tmp/pc
    step "pipelines, cold (no pipeline cache, no driver cache)"
    G16_CACHE_DIR=/tmp/pc __GL_SHADER_DISK_CACHE=0 timeout 30 $d/wgpu_pipelines 2>&1 | tee -a "$log"
    cuda_env
    b() { timeout "$1" $d/g16 bench --no-plot --json "$j" "${@:2}" 2>&1 | grep -v "^\s*$" | tee -a "$log"; }
    step "bench"
    b 30 --backends wgpu,cuda --ops msm-g1 --sizes 20 --runs 5
    b 40 --backends wgpu,cuda --ops msm-g1 --sizes 22 --runs 5
    b 30 --backends wgpu,cuda --ops msm-g2 --sizes 20 --runs 5
    t() {
        step "conformance, G16_CONFORMANCE=large, default path: $*"
        G16_CONFORMANCE=large timeout "$1" $d/backend_wgpu --test-threads 1 --skip u32 --skip plain "${@:2}" 2>&1 \
            | tee -a "$suite" | grep -E "^test |^ok|test result|panicked|FAILED" | tee -a "$log"
    }
    t 20 device_spans pointwise ntt_rejects msm_ranges
    t 30 msm_g2
    t 40 ntt_matches
    t 60 proofs
    t 120 msm_g1
    step "done"
}

# Session 5 (not run yet): the lazy Fq2 product (G16_WGPU_FQ2_LAZY=1, off by default) against
# today's product, in one call, every step under its own timeout. Binaries from a build of
# main merged with this branch (so CUDA is the merged backend, its lazy product on), carried in
# .device/wgpu as for s4 (cache/cuda filled ahead for sm_90). Order: pipeline creation cold,
# both variants (the 5 s budget; a compile failure shows here first); MSM G2 2^20 against CUDA
# in one `g16 bench` each, default / lazy / default / lazy (two runs of each variant give the
# spread; METHOD: a difference below it is noise); G1 2^20 with the switch on (its module is the
# same text: must not move); the lazy G2 MSM tests at G16_CONFORMANCE=large on both arithmetic
# paths (to 2^20 against arkworks with the edge cases), the ranges test and the proofs (B's G2
# MSM) with the switch on. Files: s5.txt (the log), h200-wgpu-s5.jsonl (each bench line; the
# lazy runs are the ones run with the variable set: see s5.txt's step headers), suite5.txt.
stage5() {
    local d=${G16_DEV:-.device/wgpu} j="$OUT/h200-wgpu-s5.jsonl" log="$OUT/s5.txt" suite="$OUT/suite5.txt"
    local t0=$SECONDS
    step() { echo "== [$((SECONDS - t0)) s] $*" | tee -a "$log"; }
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | tee -a "$log"
    $d/g16 devices 2>&1 | tee -a "$log"
    for lazy in 0 1; do
        rm -rf /tmp/pc
        step "pipelines, cold (no pipeline cache, no driver cache), G16_WGPU_FQ2_LAZY=$lazy"
        G16_WGPU_FQ2_LAZY=$lazy G16_CACHE_DIR=/tmp/pc __GL_SHADER_DISK_CACHE=0 timeout 30 $d/wgpu_pipelines 2>&1 \
            | tee -a "$log"
    done
    cuda_env
    b() { timeout "$1" $d/g16 bench --no-plot --json "$j" "${@:2}" 2>&1 | grep -v "^\s*$" | tee -a "$log"; }
    for round in 1 2; do
        for lazy in 0 1; do
            step "bench MSM G2 2^20, wgpu and cuda, G16_WGPU_FQ2_LAZY=$lazy, round $round"
            G16_WGPU_FQ2_LAZY=$lazy b 40 --backends wgpu,cuda --ops msm-g2 --sizes 20 --runs 5
        done
    done
    step "bench MSM G1 2^20, wgpu, G16_WGPU_FQ2_LAZY=1 (G1's module is unchanged: expect session 4's ~24.7 ms)"
    G16_WGPU_FQ2_LAZY=1 b 30 --backends wgpu --ops msm-g1 --sizes 20 --runs 5
    t() {
        step "conformance, G16_CONFORMANCE=large, G16_WGPU_FQ2_LAZY=1: $*"
        G16_WGPU_FQ2_LAZY=1 G16_CONFORMANCE=large timeout "$1" $d/backend_wgpu --test-threads 1 "${@:2}" 2>&1 \
            | tee -a "$suite" | grep -E "^test |^ok|test result|panicked|FAILED" | tee -a "$log"
    }
    # fq2_lazy_*: both arithmetic paths, opened with the option (the variable is not needed).
    t 120 fq2_lazy
    t 30 msm_ranges --skip u32 --skip plain
    t 90 proofs --skip u32 --skip plain
    step "done"
}

# Helpers of the session-6 stages below, which set d, j, log and t0 as locals (bash scopes
# locals dynamically, so these see the caller's): a step header with the seconds so far, one
# `g16 bench` under a timeout appending to the stage's JSON lines, and pipeline creation cold
# (no pipeline cache, no driver cache), one module after another, then all in parallel.
step() { echo "== [$((SECONDS - t0)) s] $*" | tee -a "$log"; }
b() { timeout "$1" $d/g16 bench --no-plot --json "$j" "${@:2}" 2>&1 | grep -v "^\s*$" | tee -a "$log"; }
pipelines_cold() {
    local par
    for par in "" --parallel; do
        rm -rf /tmp/pc
        step "pipelines, cold ${par:-(one module after another)}"
        G16_CACHE_DIR=/tmp/pc __GL_SHADER_DISK_CACHE=0 G16_NO_PIPELINE_CACHE=1 timeout 40 $d/wgpu_pipelines $par 2>&1 \
            | tee -a "$log"
    done
}

# Session 6: shifted bases (the shared layout, default on for 2^18 ≤ len < 2^23) against
# CUDA and against the windowed layout (G16_WGPU_MSM_PRECOMPUTE=0), in one call, every step
# under its own timeout. Binaries in .device/wgpu as for s5, plus wgpu_engine (the crate's
# engine tests). Order: pipeline creation cold (one after another, then in parallel); MSM
# G2 2^20, G1 2^20, G1 2^22 against CUDA in one `g16 bench` each, then the same wgpu cases
# with tables off; the table test on the GPU; the large conformance tests that meet tables
# (msm_g2 to 2^20, msm_g1 at 2^20 and 2^22) and the proofs; then the traced 2^20 proof.
# Files: s6.txt (the log, step headers with seconds), h200-wgpu-s6.jsonl, suite6.txt.
stage6() {
    local d=${G16_DEV:-.device/wgpu} j="$OUT/h200-wgpu-s6.jsonl" log="$OUT/s6.txt" suite="$OUT/suite6.txt"
    local t0=$SECONDS
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | tee -a "$log"
    $d/g16 devices 2>&1 | tee -a "$log"
    pipelines_cold
    cuda_env
    step "bench, tables on (default)"
    b 60 --backends wgpu,cuda --ops msm-g2 --sizes 20 --runs 5
    b 45 --backends wgpu,cuda --ops msm-g1 --sizes 20 --runs 5
    b 60 --backends wgpu,cuda --ops msm-g1 --sizes 22 --runs 5
    step "bench, tables off (G16_WGPU_MSM_PRECOMPUTE=0)"
    G16_WGPU_MSM_PRECOMPUTE=0 b 40 --backends wgpu --ops msm-g2 --sizes 20 --runs 5
    G16_WGPU_MSM_PRECOMPUTE=0 b 40 --backends wgpu --ops msm-g1 --sizes 20 --runs 5
    step "engine tests (the table test among them)"
    G16_REQUIRE_WGPU=1 timeout 60 $d/wgpu_engine --test-threads 1 2>&1 | tee -a "$suite" \
        | grep -E "^test |test result|panicked|FAILED" | tee -a "$log"
    t() {
        step "conformance, G16_CONFORMANCE=large: $*"
        G16_CONFORMANCE=large timeout "$1" $d/backend_wgpu --test-threads 1 --skip u32 --skip plain --skip fq2_lazy \
            "${@:2}" 2>&1 | tee -a "$suite" | grep -E "^test |test result|panicked|FAILED" | tee -a "$log"
    }
    t 60 msm_g2 msm_ranges
    t 120 msm_g1
    t 60 proofs
    step "prove synthetic 2^20, wgpu, 3 partitions"
    timeout 90 $d/g16 prove --backend wgpu --circuit synthetic --size 20 --partitions 3 --json 2>&1 | tail -5 \
        | tee -a "$log"
    step "done"
}

# Session 6, call 2: the shifted bases' kernel through the interpreter (its first version
# compiled for 6 s and 11 s), then the reduction's shape for one set of 2^19 buckets: MSM G2
# 2^20 against CUDA with the defaults, then segments of 8, 32, 64 (G16_WGPU_MSM_SEGMENT) and a
# table of c = 19 (G16_WGPU_MSM_TABLE_WINDOW); G1 at 2^20 and 2^22 with the defaults; the
# engine tests and the large MSM conformance. Files: s7.txt, h200-wgpu-s7.jsonl, suite7.txt.
stage7() {
    local d=${G16_DEV:-.device/wgpu} j="$OUT/h200-wgpu-s7.jsonl" log="$OUT/s7.txt" suite="$OUT/suite7.txt"
    local t0=$SECONDS
    pipelines_cold
    cuda_env
    step "bench G2 2^20, defaults"
    b 60 --backends wgpu,cuda --ops msm-g2 --sizes 20 --runs 5
    for seg in 8 32 64; do
        step "bench G2 2^20, G16_WGPU_MSM_SEGMENT=$seg"
        G16_WGPU_MSM_SEGMENT=$seg b 40 --backends wgpu --ops msm-g2 --sizes 20 --runs 5
    done
    step "bench G2 2^20, G16_WGPU_MSM_TABLE_WINDOW=19"
    G16_WGPU_MSM_TABLE_WINDOW=19 b 40 --backends wgpu --ops msm-g2 --sizes 20 --runs 5
    step "bench G2 2^20, defaults again"
    b 60 --backends wgpu,cuda --ops msm-g2 --sizes 20 --runs 5
    step "bench G1, defaults"
    b 45 --backends wgpu,cuda --ops msm-g1 --sizes 20 --runs 5
    b 60 --backends wgpu,cuda --ops msm-g1 --sizes 22 --runs 5
    for seg in 8 32; do
        step "bench G1 2^20, G16_WGPU_MSM_SEGMENT=$seg"
        G16_WGPU_MSM_SEGMENT=$seg b 40 --backends wgpu --ops msm-g1 --sizes 20 --runs 5
    done
    step "engine tests"
    G16_REQUIRE_WGPU=1 timeout 60 $d/wgpu_engine --test-threads 1 2>&1 | tee -a "$suite" \
        | grep -E "^test |test result|panicked|FAILED" | tee -a "$log"
    step "conformance, G16_CONFORMANCE=large: msm_g2 msm_g1"
    G16_CONFORMANCE=large timeout 150 $d/backend_wgpu --test-threads 1 --skip u32 --skip plain --skip fq2_lazy msm_g \
        2>&1 | tee -a "$suite" | grep -E "^test |test result|panicked|FAILED" | tee -a "$log"
    step "done"
}

# Session 6, call 3: the shifted bases' window width (G16_WGPU_MSM_TABLE_WINDOW), since c = 19
# beat the counted choice (c = 20) for G2 2^20 in call 2: G2 2^20 at c = 16..18, G1 2^20 at
# c = 16..20, G1 2^22 at c = 17..20, one `g16 bench` each (CUDA in the first of each for the
# ratio). Files: s8.txt, h200-wgpu-s8.jsonl.
stage8() {
    local d=${G16_DEV:-.device/wgpu} j="$OUT/h200-wgpu-s8.jsonl" log="$OUT/s8.txt"
    local t0=$SECONDS
    cuda_env
    step "G2 2^20, cuda"
    b 40 --backends cuda --ops msm-g2 --sizes 20 --runs 5
    for c in 18 17 16 19; do
        step "G2 2^20, G16_WGPU_MSM_TABLE_WINDOW=$c"
        G16_WGPU_MSM_TABLE_WINDOW=$c b 40 --backends wgpu --ops msm-g2 --sizes 20 --runs 5
    done
    step "G1 2^20, cuda"
    b 40 --backends cuda --ops msm-g1 --sizes 20 --runs 5
    for c in 19 18 17 16; do
        step "G1 2^20, G16_WGPU_MSM_TABLE_WINDOW=$c"
        G16_WGPU_MSM_TABLE_WINDOW=$c b 30 --backends wgpu --ops msm-g1 --sizes 20 --runs 5
    done
    step "G1 2^22, cuda"
    b 40 --backends cuda --ops msm-g1 --sizes 22 --runs 5
    for c in 19 18 17; do
        step "G1 2^22, G16_WGPU_MSM_TABLE_WINDOW=$c"
        G16_WGPU_MSM_TABLE_WINDOW=$c b 45 --backends wgpu --ops msm-g1 --sizes 22 --runs 5
    done
    step "done"
}

# Session 6, final call (final code and defaults), every step under its own timeout: pipeline
# creation cold (one module after another, and in parallel); wgpu against CUDA in one
# `g16 bench` each: MSM G1 2^20, 2^22, G2 2^20, NTT 2^22, 2^24, the 2^20 proof; the traced
# 2^20 proof and its report; the large conformance suite on the default path; the engine
# tests. Files: s9.txt, h200-wgpu-s9.jsonl, suite9.txt, prove-report9.txt, the trace.
stage9() {
    local d=${G16_DEV:-.device/wgpu} j="$OUT/h200-wgpu-s9.jsonl" log="$OUT/s9.txt" suite="$OUT/suite9.txt"
    local t0=$SECONDS
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | tee -a "$log"
    $d/g16 devices 2>&1 | tee -a "$log"
    pipelines_cold
    cuda_env
    step "bench"
    b 45 --backends wgpu,cuda --ops msm-g1 --sizes 20 --runs 5
    b 60 --backends wgpu,cuda --ops msm-g1 --sizes 22 --runs 5
    b 60 --backends wgpu,cuda --ops msm-g2 --sizes 20 --runs 5
    b 30 --backends wgpu,cuda --ops ntt --sizes 22 --runs 5
    b 40 --backends wgpu,cuda --ops ntt --sizes 24 --runs 3
    b 120 --backends wgpu,cuda --ops prove --sizes 20 --runs 3
    step "prove synthetic 2^20, wgpu, traced"
    timeout 90 $d/g16 prove --backend wgpu --circuit synthetic --size 20 --partitions 3 --trace /tmp/t.json \
        --json 2>&1 | tail -3 | tee -a "$log"
    $d/g16 timeline report /tmp/t.json 2>&1 | tee "$OUT/prove-report9.txt" | head -40 | tee -a "$log"
    gzip -c /tmp/t.json > "$OUT/h200-wgpu-prove20-s6-trace.json.gz"
    step "engine tests"
    G16_REQUIRE_WGPU=1 timeout 60 $d/wgpu_engine --test-threads 1 2>&1 | tee -a "$suite" \
        | grep -E "^test |test result|panicked|FAILED" | tee -a "$log"
    step "conformance, G16_CONFORMANCE=large, default path"
    G16_CONFORMANCE=large timeout 200 $d/backend_wgpu --test-threads 1 --skip u32 --skip plain --skip fq2_lazy 2>&1 \
        | tee -a "$suite" | grep -E "^test |test result|panicked|FAILED" | tee -a "$log"
    step "done"
}

# The CUDA backend's kernels from the cache filled ahead (cache/cuda), NVRTC from the machine.
cuda_env() {
    export G16_CACHE_DIR=/tmp/g16-cache
    mkdir -p $G16_CACHE_DIR && cp -r ${G16_DEV:-.device/wgpu}/cache/cuda $G16_CACHE_DIR/ 2>/dev/null
    local nvrtc
    nvrtc=$(find / -name 'libnvrtc.so.13*' -not -path '/proc/*' 2>/dev/null | head -1)
    [ -n "$nvrtc" ] && export LD_LIBRARY_PATH="$(dirname "$nvrtc")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}

loaders
FILTER=${2:-}
case "${1:-all}" in
    setup) setup ;;
    conformance) conformance ;;
    bench) bench ;;
    prove) prove ;;
    all) setup; conformance; bench; prove ;;
    s2) stage2 ;;
    s3a) stage3a ;;
    s3) stage3 ;;
    s4) stage4 ;;
    s5) stage5 ;;
    s6) stage6 ;;
    s7) stage7 ;;
    s8) stage8 ;;
    s9) stage9 ;;
    *) echo "usage: $0 setup|conformance|bench|prove|all|s2|s3a|s3|s4|s5|s6|s7|s8|s9" >&2; exit 2 ;;
esac
