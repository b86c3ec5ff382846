#!/bin/bash
# Third device run: the suite at the GPU machine's sizes, then CUDA against the CPU.
source "$(dirname "$0")/env.sh"
cd "$HERE"
export G16_CACHE_DIR="$HERE/cache"
G16_REQUIRE_CUDA=1 G16_CONFORMANCE=large timeout 330 ./backend_cuda --test-threads=1 2>&1 | tee $OUT/suite-large.log | grep -E "^test |panicked|result|SEED" | head -40
for s in 24 20 16; do
  timeout 150 ./g16 bench --backends cuda,cpu --ops msm-g1,msm-g2,ntt --sizes $s --runs 3 --warmup 1 --no-plot --json $OUT/bench3.jsonl 2>&1 | grep -v "^wrote"
done
