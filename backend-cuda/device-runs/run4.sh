#!/bin/bash
# Final device run: regression, the 2^24 targets, a 2^22 proof's timeline, the 0/1 split on sha256.
source "$(dirname "$0")/env.sh"
cd "$HERE"
export G16_CACHE_DIR="$HERE/cache"
G16_REQUIRE_CUDA=1 timeout 60 ./backend_cuda --test-threads=1 2>&1 | grep -E "test result|panicked"
timeout 100 ./g16 bench --backends cuda --ops msm-g1,msm-g2,ntt --sizes 24 --runs 5 --warmup 1 --no-plot --json $OUT/bench4.jsonl 2>&1 | grep -v "^wrote"
timeout 200 ./g16 prove --circuit synthetic --size 22 --backend cuda --partitions 3 --trace $OUT/trace22.json --timeline $OUT/timeline22.txt > $OUT/prove22.txt 2>&1; echo "prove22 rc=$?"
grep -E "^(prove|  device|    h |    msm|      msm_g[12] |    stage|device busy|wall|unattr|[0-9]+ proof)" $OUT/prove22.txt | head -40
for split in 1 0; do
  G16_CUDA_ONES_SPLIT=$split timeout 90 ./g16 prove --circuit sha256 --size 17 --backend cuda --partitions 3 --json > $OUT/sha17-split$split.json 2>&1; echo "sha256 split=$split rc=$?"
  python3 -c "import json,sys; d=json.load(open('$OUT/sha17-split$split.json')); s=d['steps_ms']; print('split', $split, {k: round(v,1) for k,v in s.items() if k.startswith('msm') or k in ('device','h')}, 'verified', d['verified'])" 2>&1 | tail -2
done
