#!/bin/bash
# Issue 3, call 1 (H200): Nsight Compute on the G1 accumulation with the single-chain product
# (G16_FF_SERIAL_MUL=1, main's) and the even/odd two-chain product (the new default); the
# CI-size conformance suite with the new product; then A/B at 2^24 (G1 and G2, 3 runs):
# default, serial product, cp.async prefetch, G1 and G2 accumulations at 168 registers; and the split reduction
# at 2^22. Kernel cache prefilled here for every define set used (unit.py / fill_cache).
cd "$(dirname "$0")"; D=$PWD
NVRTC_DIR="$(dirname "$(find / -name 'libnvrtc.so.13*' -not -path '/proc/*' 2>/dev/null | grep -v builtins | head -1)")"
export LD_LIBRARY_PATH="$NVRTC_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" G16_CACHE_DIR=$D/cache
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
ncu_acc() {  # $1 = label; env = variant
  timeout 100 ncu --clock-control none --kernel-name regex:g1_accumulate --launch-count 1 \
    --section SchedulerStats --section WarpStateStats --section ComputeWorkloadAnalysis \
    --section InstructionStats --section Occupancy --section LaunchStats --section SpeedOfLight \
    ./g16 bench --backends cuda --ops msm-g1 --sizes 22 --runs 1 --warmup 0 --no-plot > $OUT/ncu-$1.txt 2>&1
  echo "ncu $1 rc=$?"; grep -E "Duration|Issue Slots Busy|No Eligible|Active Warps Per Scheduler|Eligible Warps|Issued Warp|Executed Ipc A|Registers Per|Achieved Occ|Stall|Compute \(SM\) Th" $OUT/ncu-$1.txt | head -30
}
echo "== ncu (2^22, windowed layout as at 2^24)"
G16_CUDA_MSM_PRECOMPUTE=0 G16_CUDA_DEFINES=-DG16_FF_SERIAL_MUL=1 ncu_acc serial
G16_CUDA_MSM_PRECOMPUTE=0 ncu_acc evenodd
echo "== conformance at CI sizes, new product"
G16_REQUIRE_CUDA=1 timeout 120 ./backend_cuda --test-threads=2 2>&1 | tee $OUT/suite-ci.log | grep -E "panicked|test result|FAILED|failed"
b() { local label=$1 t=$2; shift 2; echo "-- $label"; timeout $t ./g16 bench --backends cuda --no-plot --runs 3 "$@" --json $OUT/ab.jsonl.tmp 2>&1 | grep -E "msm"; \
  sed "s/^{/{\"variant\":\"$label\",/" $OUT/ab.jsonl.tmp >> $OUT/ab.jsonl; rm -f $OUT/ab.jsonl.tmp; }
echo "== A/B"
b evenodd-24 60 --ops msm-g1,msm-g2 --sizes 24
G16_CUDA_DEFINES=-DG16_FF_SERIAL_MUL=1 b serial-24 60 --ops msm-g1,msm-g2 --sizes 24
G16_CUDA_DEFINES=-DG16_MSM_PREFETCH=1 b prefetch-24 60 --ops msm-g1,msm-g2 --sizes 24
G16_CUDA_DEFINES=-DG16_G1_ACC_MINB=3 b g1minb3-24 45 --ops msm-g1 --sizes 24
G16_CUDA_DEFINES=-DG16_G2_ACC_MINB=3 b g2minb3-24 45 --ops msm-g2 --sizes 24
b evenodd-22 40 --ops msm-g1,msm-g2 --sizes 22
G16_CUDA_MSM_REDUCE=split b split-22 40 --ops msm-g1,msm-g2 --sizes 22
