#!/bin/bash
# A/B run: G2 accumulation inlined or not; MSM window width 16/18/20 at 2^24 (suite first, each variant).
source "$(dirname "$0")/env.sh"
cd "$HERE"
export G16_CACHE_DIR="$HERE/cache"
G16_REQUIRE_CUDA=1 timeout 40 ./backend_cuda --test-threads=1 2>&1 | grep -E "test result|panicked"
G16_CUDA_DEFINES=-DG16_G2_HOT_INLINE=1 G16_REQUIRE_CUDA=1 timeout 40 ./backend_cuda --test-threads=1 msm 2>&1 | grep -E "test result|panicked"
G16_CUDA_MSM_WINDOW=20 G16_REQUIRE_CUDA=1 timeout 60 ./backend_cuda --test-threads=1 msm 2>&1 | grep -E "test result|panicked"
for v in "" "-DG16_G2_HOT_INLINE=1"; do
  echo "G2 variant '$v'"; G16_CUDA_DEFINES="$v" timeout 60 ./g16 bench --backends cuda --ops msm-g2 --sizes 24 --runs 3 --warmup 1 --no-plot --json $OUT/bench5-g2$v.jsonl 2>&1 | grep msm
done
for c in 16 18 20; do
  echo "G1 window $c"; G16_CUDA_MSM_WINDOW=$c timeout 40 ./g16 bench --backends cuda --ops msm-g1 --sizes 24 --runs 3 --warmup 1 --no-plot --json $OUT/bench5-g1-c$c.jsonl 2>&1 | grep msm
done
