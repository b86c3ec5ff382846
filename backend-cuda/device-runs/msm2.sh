#!/bin/bash
# MSM call 2 (prepared, NOT RUN: the session's shared device time ran out first). For the next
# session: CI-size MSM conformance with the two unmeasured switches on (cp.async prefetch,
# split reduction) in both layouts; the benchmark of the defaults (G1, G2 at 2^20/22/24, 5
# runs); a 2^22 synthetic proof (key generated here, cached on local disk); the whole
# conformance suite at the GPU machine's sizes; then the switches A/B at 2^22 and 2^24.
# Prepare here: g16 and the backend_cuda test binary (device-run.sh prepare), and the kernel
# cache for each set of defines used, e.g. `G16_CUDA_DEFINES=-DG16_MSM_PREFETCH=1
# G16_CACHE_DIR=<dir>/cache cargo run --release -p g16-cuda --example fill_cache -- sm_90`
# (a missing entry is compiled there by NVRTC: ~1 min of device time each).
cd "$(dirname "$0")"; D=$PWD
NVRTC_DIR="$(dirname "$(find / -name 'libnvrtc.so.13*' -not -path '*/proc/*' 2>/dev/null | grep -v builtins | head -1)")"
export LD_LIBRARY_PATH="$NVRTC_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" G16_CACHE_DIR=$D/cache
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
echo "== conformance msm, CI sizes, windowed and shared (from 2^10) layouts"
ci_msm() {
  for pre in 18 10; do
    G16_CUDA_MSM_PRECOMPUTE=$pre G16_REQUIRE_CUDA=1 timeout 60 ./backend_cuda --test-threads=1 msm 2>&1 \
      | tee -a $OUT/suite-ci-msm.log | grep -E "^test |panicked|result" | tee /dev/stderr | grep -q "result: ok" || return 1
  done
}
export G16_CUDA_DEFINES=-DG16_MSM_PREFETCH=1 G16_CUDA_MSM_REDUCE=split
ci_msm || echo "!!! the switches FAILED the CI-size MSM conformance"
unset G16_CUDA_DEFINES G16_CUDA_MSM_REDUCE
ci_msm || echo "!!! the defaults FAILED the CI-size MSM conformance"
b() { timeout "$1" "${@:2}" --no-plot 2>&1 | grep -E "msm|device ms"; }
echo "== bench"
for s in 20 22 24; do b 100 ./g16 bench --backends cuda --ops msm-g1,msm-g2 --sizes $s --runs 5 --json $OUT/h200-cuda-msm.jsonl; done
echo "== prove 2^22"
timeout 200 ./g16 prove --backend cuda --circuit synthetic --size 22 --partitions 3 --trace $OUT/trace22.json --json \
  > $OUT/prove22.json 2> $OUT/prove22.err; echo "rc=$?"; tail -c 1500 $OUT/prove22.json; tail -3 $OUT/prove22.err
echo "== conformance, large"
G16_REQUIRE_CUDA=1 G16_CONFORMANCE=large timeout 240 ./backend_cuda --test-threads=1 2>&1 | tee $OUT/suite-large.log \
  | grep -E "^test |panicked|result"
echo "== A/B at 2^22 and 2^24"
for s in 22 24; do
  G16_CUDA_DEFINES=-DG16_MSM_PREFETCH=1 b 60 ./g16 bench --backends cuda --ops msm-g1,msm-g2 --sizes $s --runs 3 --json $OUT/ab-prefetch.jsonl
  G16_CUDA_MSM_REDUCE=split b 60 ./g16 bench --backends cuda --ops msm-g1,msm-g2 --sizes $s --runs 3 --json $OUT/ab-split-reduce.jsonl
done
G16_CUDA_MSM_PRECOMPUTE_MAX=25 G16_CUDA_DEFINES=-DG16_MSM_PREFETCH=1 b 60 ./g16 bench --backends cuda --ops msm-g1,msm-g2 --sizes 24 --runs 3 --json $OUT/ab-shared24-prefetch.jsonl
G16_CUDA_DEFINES=-DG16_G2_ACC_MINB=3 b 40 ./g16 bench --backends cuda --ops msm-g2 --sizes 24 --runs 3 --json $OUT/ab-g2minb3.jsonl
