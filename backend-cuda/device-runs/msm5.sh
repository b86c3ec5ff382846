#!/bin/bash
# Issue 3, call 3 (H200): G2's accumulation with its Fq2 products taking their operands by
# value (-DG16_FQ2_BYVALUE=1), alone and with the mixed addition inlined
# (-DG16_G2_HOT_INLINE=1), against the defaults (G2 2^24, 3 runs each). The best variant, if
# it beats the defaults by more than 3 %, then runs the CI-size suite and the large MSM
# conformance. Last, ncu on one launch of g2_accumulate (defaults, 2^22 windowed).
cd "$(dirname "$0")"; D=$PWD
NVRTC_DIR="$(dirname "$(find / -name 'libnvrtc.so.13*' -not -path '/proc/*' 2>/dev/null | grep -v builtins | head -1)")"
export LD_LIBRARY_PATH="$NVRTC_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" G16_CACHE_DIR=$D/cache
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
b() { local label=$1 t=$2; shift 2; echo "-- $label"; timeout $t ./g16 bench --backends cuda --no-plot --runs 3 "$@" --json $OUT/ab.jsonl.tmp 2>&1 | grep -E "msm"; \
  sed "s/^{/{\"variant\":\"$label\",/" $OUT/ab.jsonl.tmp >> $OUT/ab.jsonl; rm -f $OUT/ab.jsonl.tmp; }
echo "== A/B, G2 2^24"
b g2-default-24 30 --ops msm-g2 --sizes 24
G16_CUDA_DEFINES="-DG16_FQ2_BYVALUE=1" b g2-byvalue-24 30 --ops msm-g2 --sizes 24
G16_CUDA_DEFINES="-DG16_FQ2_BYVALUE=1 -DG16_G2_HOT_INLINE=1" b g2-byvalue-hot-24 30 --ops msm-g2 --sizes 24
best=$(python3 -c "
import json
m={}
for l in open('$OUT/ab.jsonl'):
    j=json.loads(l); m[j['variant']]=j['median_ms']
d=m.get('g2-default-24',1e9); v=min((x for x in m if x!='g2-default-24'), key=lambda x:m[x], default=None)
print(v if v and m[v] < 0.97*d else '')")
echo "best: ${best:-defaults}"
case "$best" in
  g2-byvalue-24) export G16_CUDA_DEFINES="-DG16_FQ2_BYVALUE=1" ;;
  g2-byvalue-hot-24) export G16_CUDA_DEFINES="-DG16_FQ2_BYVALUE=1 -DG16_G2_HOT_INLINE=1" ;;
esac
if [ -n "$best" ]; then
  echo "== conformance with $G16_CUDA_DEFINES: CI sizes, then large MSM"
  G16_REQUIRE_CUDA=1 timeout 40 ./backend_cuda --test-threads=2 2>&1 | tee $OUT/suite-ci.log | grep -E "panicked|test result|FAILED|failed"
  G16_REQUIRE_CUDA=1 G16_CONFORMANCE=large timeout 80 ./backend_cuda --test-threads=1 msm 2>&1 | tee $OUT/suite-large-msm.log \
    | grep -E "^test |panicked|test result"
  b best-g1g2-24 40 --ops msm-g1,msm-g2 --sizes 24
fi
unset G16_CUDA_DEFINES
echo "== ncu g2_accumulate (defaults, 2^22 windowed)"
G16_CUDA_MSM_PRECOMPUTE=0 timeout 60 ncu --clock-control none --kernel-name regex:g2_accumulate --launch-count 1 \
  --section SchedulerStats --section WarpStateStats --section ComputeWorkloadAnalysis --section InstructionStats \
  --section Occupancy --section SpeedOfLight --section MemoryWorkloadAnalysis \
  ./g16 bench --backends cuda --ops msm-g2 --sizes 22 --runs 1 --warmup 0 --no-plot > $OUT/ncu-g2.txt 2>&1
echo "ncu rc=$?"; grep -E "Duration|Issue Slots Busy|No Eligible|Active Warps Per Scheduler|Executed Ipc A|Registers Per|spends|L1/TEX Hit|L2 Hit|Local|highest-utilized" $OUT/ncu-g2.txt | head -20
