#!/bin/bash
# The CUDA backend's GPU-machine cycle, in two halves.
#
#   bash backend-cuda/device-run.sh prepare [DEST]   here (no GPU needed): release build, test binary,
#                                                    kernel cache for sm_90, all copied to DEST
#                                                    (default /work/main/.device/cuda, which the
#                                                    device tool ships with carry: [".device"])
#   bash .device/cuda/device-run.sh all              there: the suite at the GPU machine's sizes,
#                                                    the benchmark against the CPU, a 2^22 proof's
#                                                    trace, the sha256 0/1 split on and off;
#                                                    logs and JSON under $OUT
# Steps there can be run alone: suite, bench, prove, split.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

prepare() {
  local dest="${1:-/work/main/.device/cuda}" root
  root="$(cd "$HERE/.." && pwd)"
  cd "$root" || exit 1
  cargo build --release --bin g16 || exit 1
  local test_bin
  test_bin="$(cargo test --release --no-run -p g16 --test backend_cuda --message-format=json 2>/dev/null \
    | python3 -c 'import json,sys; print([j["executable"] for j in map(json.loads, sys.stdin) if j.get("executable") and "backend_cuda" in j["executable"]][-1])')"
  mkdir -p "$dest"
  rm -rf "$dest/cache"
  # NVRTC here: the pip wheel's (as CI), unless LD_LIBRARY_PATH already finds one.
  local wheel
  wheel="$(python3 -c "import nvidia, os; print(os.path.join(os.path.dirname(nvidia.__path__[0]), 'nvidia', 'cu13', 'lib'))" 2>/dev/null)"
  export LD_LIBRARY_PATH="${wheel}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  G16_CACHE_DIR="$dest/cache" cargo run --release -q -p g16-cuda --example fill_cache -- sm_90 || exit 1
  cp target/release/g16 "$dest/g16" && cp "$test_bin" "$dest/backend_cuda" && strip "$dest/g16" "$dest/backend_cuda"
  cp "$HERE/device-run.sh" "$dest/device-run.sh"
  du -sh "$dest"
}

there_env() {
  cd "$HERE" || exit 1
  export G16_CACHE_DIR="$HERE/cache" OUT="${OUT:-/tmp/out}"
  mkdir -p "$OUT"
  local nvrtc
  nvrtc="$(find / -name 'libnvrtc.so.13*' -not -path '/proc/*' 2>/dev/null | grep -v builtins | head -1)"
  export LD_LIBRARY_PATH="$(dirname "$nvrtc")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  nvidia-smi -L
  ./g16 devices
}

suite() {
  G16_REQUIRE_CUDA=1 G16_CONFORMANCE=large timeout 330 ./backend_cuda --test-threads=1 2>&1 | tee "$OUT/suite-large.log" \
    | grep -E "^test |panicked|result"
}

bench() {
  for s in 16 20; do
    timeout 150 ./g16 bench --backends cuda,cpu --ops msm-g1,msm-g2,ntt --sizes $s --runs 3 --no-plot --json "$OUT/bench.jsonl"
  done
  timeout 120 ./g16 bench --backends cuda --ops msm-g1,msm-g2,ntt --sizes 24 --runs 5 --no-plot --json "$OUT/bench.jsonl"
}

prove() {
  timeout 240 ./g16 prove --circuit synthetic --size 22 --backend cuda --partitions 3 --trace "$OUT/trace22.json" \
    > "$OUT/prove22.txt" 2>&1
  tail -5 "$OUT/prove22.txt"
}

split() {
  for on in 1 0; do
    G16_CUDA_ONES_SPLIT=$on timeout 90 ./g16 prove --circuit sha256 --size 17 --backend cuda --partitions 3 --json \
      2>/dev/null | tail -1 > "$OUT/sha256-17-split$on.json"
    echo "split=$on: $(python3 -c "import json; print(json.load(open('$OUT/sha256-17-split$on.json'))['steps_ms']['device'])") ms"
  done
}

case "${1:-}" in
  prepare) shift; prepare "$@" ;;
  all) there_env; suite; bench; prove; split ;;
  suite | bench | prove | split) there_env; "$1" ;;
  *) sed -n 2,14p "${BASH_SOURCE[0]}"; exit 2 ;;
esac
