#!/bin/bash
# (Sent inline as the command of the sixth call, on the machine still warm from run5.)
source .device/cuda/env.sh >/dev/null; cd .device/cuda
for c in 13 14 15; do echo "G1 window $c"; G16_CUDA_MSM_WINDOW=$c timeout 30 ./g16 bench --backends cuda --ops msm-g1 --sizes 24 --runs 3 --warmup 1 --no-plot --json $OUT/bench6-g1-c$c.jsonl 2>&1 | grep msm; done
echo "G2 window 14"; G16_CUDA_MSM_WINDOW=14 timeout 40 ./g16 bench --backends cuda --ops msm-g2 --sizes 24 --runs 2 --warmup 1 --no-plot --json $OUT/bench6-g2-c14.jsonl 2>&1 | grep msm
