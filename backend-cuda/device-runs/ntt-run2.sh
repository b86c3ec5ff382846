#!/bin/bash
# NTT device cycle 2 (issue 3): A/B of the pass kernels at 2^24, then, with the fastest, the
# conformance NTT tests at GPU sizes, the final benchmark (against the CPU) and ncu. Into $OUT.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE" || exit 1
export G16_CACHE_DIR="$HERE/cache"
NVRTC="$(ls /usr/local/cuda*/lib64/libnvrtc.so.13* /usr/local/cuda*/targets/*/lib/libnvrtc.so.13* 2>/dev/null | head -1)"
export LD_LIBRARY_PATH="$(dirname "$NVRTC")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi -L
bench() {  # variant-label env-assignment sizes... (json to /tmp/b.jsonl)
  local label="$1" envset="$2"; shift 2; rm -f /tmp/b.jsonl
  for s in "$@"; do env $envset timeout 40 ./g16 bench --backends cuda --ops ntt --sizes $s --runs 7 --no-plot --json /tmp/b.jsonl 2>&1 | grep -E "ntt|rror"; done
  sed "s/}\$/, \"variant\": \"$label\"}/" /tmp/b.jsonl >> "$OUT/ntt-variants.jsonl"
}
for v in r4 r8 r8call r4x4 r2; do echo "== $v"; bench "G16_CUDA_NTT_KERNEL=$v" "G16_CUDA_NTT_KERNEL=$v" 24; done
BEST="$(python3 -c "
import json; rows=[json.loads(l) for l in open('$OUT/ntt-variants.jsonl')]
print(min(rows, key=lambda r: r['median_ms'])['variant'].split('=')[1])")"
echo "== fastest: $BEST"; export G16_CUDA_NTT_KERNEL="$BEST"
echo "== $BEST + split twiddles"; bench "G16_CUDA_NTT_KERNEL=$BEST G16_CUDA_NTT_TWIDDLES=split" "G16_CUDA_NTT_TWIDDLES=split" 22 24
echo "== conformance (ntt tests, G16_CONFORMANCE=large, G16_CUDA_NTT_KERNEL=$BEST)"
G16_REQUIRE_CUDA=1 G16_CONFORMANCE=large timeout 120 ./backend_cuda ntt --test-threads 1 2>&1 | tee "$OUT/ntt-suite.log" | grep -E "^test |panicked|result|SKIPPED"
echo "== final bench ($BEST)"
for s in 16 20 22 24; do timeout 40 ./g16 bench --backends cuda --ops ntt --sizes $s --runs 7 --no-plot --json "$OUT/ntt-final.jsonl" 2>&1 | grep -E "ntt|rror"; done
for s in 16 20 22; do timeout 40 ./g16 bench --backends cpu --ops ntt --sizes $s --runs 7 --no-plot --json "$OUT/ntt-final.jsonl" 2>&1 | grep -E "ntt|rror"; done
echo "== ncu ($BEST)"
timeout 60 /usr/local/cuda/bin/ncu --clock-control none --kernel-name regex:ntt_radix --launch-count 3 --section SpeedOfLight \
  --section Occupancy --section LaunchStats ./g16 bench --backends cuda --ops ntt --sizes 24 --runs 1 --warmup 0 --no-plot > "$OUT/ncu.txt" 2>&1
grep -E "  ntt_radix|Duration|Compute \(SM\)|DRAM Through|Registers|Achieved Occupancy" "$OUT/ncu.txt"
