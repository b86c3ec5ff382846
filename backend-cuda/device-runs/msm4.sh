#!/bin/bash
# Issue 3, call 2 (H200): the final code and defaults (two-chain product, dedicated squaring,
# madd reordered, G1 accumulation at 3 blocks an SM, cp.async prefetch for G2 only). In order of
# importance: the conformance suite at CI sizes; the final benchmark (G1 and G2 at 2^24, 5
# runs); NTT 2^24; the large MSM conformance (G1 to 2^24, G2 to 2^20, edge cases); A/B of the
# squaring and of G1's launch bounds; G1 and G2 at 2^20 and 2^22. Kernel cache prefilled here.
cd "$(dirname "$0")"; D=$PWD
NVRTC_DIR="$(dirname "$(find / -name 'libnvrtc.so.13*' -not -path '/proc/*' 2>/dev/null | grep -v builtins | head -1)")"
export LD_LIBRARY_PATH="$NVRTC_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" G16_CACHE_DIR=$D/cache
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
echo "== conformance at CI sizes"
G16_REQUIRE_CUDA=1 timeout 60 ./backend_cuda --test-threads=2 2>&1 | tee $OUT/suite-ci.log | grep -E "panicked|test result|FAILED|failed"
echo "== final bench"
timeout 70 ./g16 bench --backends cuda --ops msm-g1,msm-g2 --sizes 24 --runs 5 --no-plot --json $OUT/h200-cuda-msm-s3.jsonl 2>&1 | grep -E "msm"
timeout 30 ./g16 bench --backends cuda --ops ntt --sizes 24 --runs 5 --no-plot --json $OUT/h200-cuda-msm-s3.jsonl 2>&1 | grep -E "ntt"
echo "== conformance, large, msm"
G16_REQUIRE_CUDA=1 G16_CONFORMANCE=large timeout 150 ./backend_cuda --test-threads=1 msm 2>&1 | tee $OUT/suite-large-msm.log \
  | grep -E "^test |panicked|test result"
b() { local label=$1 t=$2; shift 2; echo "-- $label"; timeout $t ./g16 bench --backends cuda --no-plot --runs 3 "$@" --json $OUT/ab.jsonl.tmp 2>&1 | grep -E "msm"; \
  sed "s/^{/{\"variant\":\"$label\",/" $OUT/ab.jsonl.tmp >> $OUT/ab.jsonl; rm -f $OUT/ab.jsonl.tmp; }
echo "== A/B"
G16_CUDA_DEFINES=-DG16_FF_SQR=0 b sqr-off-24 30 --ops msm-g1 --sizes 24
G16_CUDA_DEFINES=-DG16_G1_ACC_MINB=4 b g1minb4-24 30 --ops msm-g1 --sizes 24
echo "== 2^20, 2^22"
timeout 45 ./g16 bench --backends cuda --ops msm-g1,msm-g2 --sizes 20..22 --runs 3 --no-plot --json $OUT/h200-cuda-msm-s3.jsonl 2>&1 | grep -E "msm"
