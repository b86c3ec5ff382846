#!/bin/bash
# Run 1 of the NTT work (sent as the command of one call). Its bench steps failed: `--sizes` takes
# one size or a range A..B, not a list; ntt-run2.sh runs one size a call.
# NTT device cycle (issue 3): conformance NTT tests at GPU sizes, then g16 bench (default kernel,
# against the CPU), the A/B variants, and ncu on the 2^24 passes. Everything lands in $OUT.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE" || exit 1
export G16_CACHE_DIR="$HERE/cache"
NVRTC="$(ls /usr/local/cuda*/lib64/libnvrtc.so.13* /usr/local/cuda*/targets/*/lib/libnvrtc.so.13* 2>/dev/null | head -1)"
[ -z "$NVRTC" ] && NVRTC="$(find / -name 'libnvrtc.so.13*' -not -path '/proc/*' 2>/dev/null | grep -v builtins | head -1)"
export LD_LIBRARY_PATH="$(dirname "$NVRTC")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi -L; ./g16 devices 2>&1 | head -5
MODE="${1:-all}"
echo "== conformance (ntt tests, G16_CONFORMANCE=large)"
G16_REQUIRE_CUDA=1 G16_CONFORMANCE=large timeout 170 ./backend_cuda ntt --test-threads 1 2>&1 | tee "$OUT/ntt-suite.log" | grep -E "^test |panicked|result|SKIPPED"
echo "== bench, default kernel"
timeout 60 ./g16 bench --backends cuda --ops ntt --sizes 16,20,22,24 --runs 7 --no-plot --json "$OUT/ntt-default.jsonl" 2>&1 | grep -E "ntt|error"
[ "$MODE" = all ] && timeout 60 ./g16 bench --backends cpu --ops ntt --sizes 16,20,22 --runs 7 --no-plot --json "$OUT/ntt-default.jsonl" 2>&1 | grep -E "ntt|error"
[ "$MODE" = final ] && exit 0
for v in "bounded G16_CUDA_NTT_KERNEL=bounded" "call G16_CUDA_NTT_KERNEL=call" "split G16_CUDA_NTT_TWIDDLES=split"; do
  set -- $v; echo "== bench $1 ($2)"
  env "$2" timeout 40 ./g16 bench --backends cuda --ops ntt --sizes 20,22,24 --runs 7 --no-plot --json "$OUT/ntt-$1.jsonl" 2>&1 | grep -E "ntt|error"
done
NCU="$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)"
echo "== ncu ($NCU)"
timeout 80 "$NCU" --clock-control none --kernel-name regex:ntt_radix --launch-count 3 --section SpeedOfLight \
  --section Occupancy --section LaunchStats \
  ./g16 bench --backends cuda --ops ntt --sizes 24 --runs 1 --warmup 0 --no-plot > "$OUT/ncu.txt" 2>&1
grep -E "ntt_radix|Duration|Throughput|Registers|Achieved Occupancy|Theoretical Occupancy|Block Limit|Pipe|Executed Ipc" "$OUT/ncu.txt" | head -80
