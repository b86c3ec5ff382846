#!/bin/bash
# MSM call 1: the phase split before (g16-base, main's kernels) and after (g16) the workspace,
# device-side big buckets, folds and shifted bases; CI-size MSM conformance through the
# shared layout (G16_CUDA_MSM_PRECOMPUTE=10), then the large G1 MSM test.
cd "$(dirname "$0")"; D=$PWD
NVRTC_DIR="$(dirname "$(find / -name 'libnvrtc.so.13*' -not -path '*/proc/*' 2>/dev/null | grep -v builtins | head -1)")"
export LD_LIBRARY_PATH="$NVRTC_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
b() { timeout "$1" "${@:2}" --no-plot 2>&1 | grep -E "msm|device ms" ; }
echo "== base"; export G16_CACHE_DIR=$D/cache-base
for s in 20 22 24; do b 60 ./g16-base bench --backends cuda --ops msm-g1,msm-g2 --sizes $s --runs 3 --json $OUT/base.jsonl; done
echo "== new"; export G16_CACHE_DIR=$D/cache
for s in 20 22 24; do b 90 ./g16 bench --backends cuda --ops msm-g1,msm-g2 --sizes $s --runs 3 --json $OUT/new.jsonl; done
echo "== new, no shifted bases"
G16_CUDA_MSM_PRECOMPUTE=0 b 60 ./g16 bench --backends cuda --ops msm-g1,msm-g2 --sizes 24 --runs 3 --json $OUT/new-windowed.jsonl
echo "== conformance msm, CI sizes, shared layout from 2^10"
G16_CUDA_MSM_PRECOMPUTE=10 G16_REQUIRE_CUDA=1 timeout 60 ./backend_cuda --test-threads=1 msm 2>&1 | tee $OUT/suite-ci-shared.log | grep -E "^test |panicked|result"
echo "== conformance msm_g1 large"
G16_CONFORMANCE=large G16_REQUIRE_CUDA=1 timeout 100 ./backend_cuda --test-threads=1 msm_g1 2>&1 | tee $OUT/suite-large-g1.log | grep -E "^test |panicked|result"
