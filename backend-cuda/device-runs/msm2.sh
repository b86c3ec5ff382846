#!/bin/bash
# MSM call 2 (final): CI-size MSM check through the shared layout; the benchmark (G1, G2 at
# 2^20/22/24, 5 runs); a 2^22 synthetic proof (key generated here, cached on local disk); the
# whole conformance suite at the GPU machine's sizes; then A/B variants at 2^24.
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
if ! ci_msm; then
  echo "!!! FAILED with the defaults: everything below runs without cp.async prefetch and with the scalar reduce"
  export G16_CUDA_DEFINES=-DG16_MSM_PREFETCH=0 G16_CUDA_MSM_REDUCE=scalar
  ci_msm || echo "!!! FAILED again"
fi
b() { timeout "$1" "${@:2}" --no-plot 2>&1 | grep -E "msm|device ms"; }
echo "== bench"
for s in 20 22 24; do b 100 ./g16 bench --backends cuda --ops msm-g1,msm-g2 --sizes $s --runs 5 --json $OUT/h200-cuda-msm.jsonl; done
echo "== prove 2^22"
timeout 200 ./g16 prove --backend cuda --circuit synthetic --size 22 --partitions 3 --trace $OUT/trace22.json --json \
  > $OUT/prove22.json 2> $OUT/prove22.err; echo "rc=$?"; tail -c 1500 $OUT/prove22.json; tail -3 $OUT/prove22.err
echo "== conformance, large"
G16_REQUIRE_CUDA=1 G16_CONFORMANCE=large timeout 240 ./backend_cuda --test-threads=1 2>&1 | tee $OUT/suite-large.log \
  | grep -E "^test |panicked|result"
echo "== A/B at 2^24"
G16_CUDA_MSM_REDUCE=scalar b 40 ./g16 bench --backends cuda --ops msm-g1,msm-g2 --sizes 24 --runs 3 --json $OUT/ab-scalar-reduce.jsonl
G16_CUDA_DEFINES=-DG16_MSM_PREFETCH=0 b 40 ./g16 bench --backends cuda --ops msm-g1,msm-g2 --sizes 24 --runs 3 --json $OUT/ab-noprefetch.jsonl
G16_CUDA_MSM_PRECOMPUTE=0 b 40 ./g16 bench --backends cuda --ops msm-g1,msm-g2 --sizes 24 --runs 3 --json $OUT/ab-windowed.jsonl
G16_CUDA_DEFINES=-DG16_G2_ACC_MINB=3 b 40 ./g16 bench --backends cuda --ops msm-g2 --sizes 24 --runs 3 --json $OUT/ab-g2minb3.jsonl
