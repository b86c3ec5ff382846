#!/bin/bash
# First device run: devices, the CUDA suite at CI sizes, a first benchmark.
source "$(dirname "$0")/env.sh"
cd "$HERE"
nvidia-smi -L
./g16 devices 2>&1 | tee $OUT/devices.txt
G16_REQUIRE_CUDA=1 timeout 300 ./backend_cuda --test-threads=1 2>&1 | tee $OUT/suite-ci.log | grep -E "^test |panicked|result|SKIPPED|differs|error" | head -60
timeout 200 ./g16 bench --backends cuda --ops msm-g1,msm-g2,ntt --sizes 10..20 --runs 3 --no-plot --json $OUT/bench1.jsonl 2>&1 | tail -40
