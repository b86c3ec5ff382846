#!/bin/bash
# Second device run: regression at CI sizes, a proof's timeline (phase breakdown), MSM/NTT scaling.
source "$(dirname "$0")/env.sh"
cd "$HERE"
export G16_CACHE_DIR="$HERE/cache"
G16_REQUIRE_CUDA=1 timeout 120 ./backend_cuda --test-threads=1 2>&1 | tee $OUT/suite-ci.log | grep -E "^test |panicked|result" | head -30
timeout 150 ./g16 prove --circuit synthetic --size 18 --backend cuda --seed 3 2>&1 | tee $OUT/prove18.txt | tail -60
timeout 200 ./g16 bench --backends cuda --ops msm-g1,ntt --sizes 20..24 --runs 3 --no-plot --json $OUT/bench2.jsonl 2>&1 | tail -12
