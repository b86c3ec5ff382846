#!/bin/bash
# The staging regression (NOTES.md, "A full proof"): the 2^22 proof traced four ways — today's
# defaults, staging under the operation lock again (G16_CUDA_STAGING_LOCK=1), freed memory kept
# in the pool (G16_CUDA_POOL_KEEP=1), and both — then the large CUDA suite if time is left.
# Expects beside it: g16 and the backend_cuda test binary (release, stripped) and a kernel
# cache in cache/ (fill_cache): copy the script and those into a git-ignored .device/<dir>/,
# carry that dir, and run `OUT=$OUT bash .device/<dir>/staging.sh` (backend-cuda/device-run.sh
# and NOTES.md describe the bundle). Writes under $OUT: staging.log (one summary line a variant),
# prove22-*.json, report-*.txt, suite-large.log. About 4 minutes on one H200 (setup ~1 min).
set -u
cd "$(dirname "$0")"
NVRTC_DIR="$(dirname "$(find / -name 'libnvrtc.so.13*' -not -path '/proc/*' 2>/dev/null | grep -v builtins | head -1)")"
export LD_LIBRARY_PATH="$NVRTC_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p /tmp/g16c && cp -r cache/* /tmp/g16c/
export G16_CACHE_DIR=/tmp/g16c
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a "$OUT/staging.log"; }
el "setup 2^22"; timeout 150 ./g16 setup --circuit synthetic --size 22 >> "$OUT/staging.log" 2>&1
for variant in default lock keep both; do
  case $variant in
    default) envs=() ;;
    lock) envs=(G16_CUDA_STAGING_LOCK=1) ;;
    keep) envs=(G16_CUDA_POOL_KEEP=1) ;;
    both) envs=(G16_CUDA_STAGING_LOCK=1 G16_CUDA_POOL_KEEP=1) ;;
  esac
  el "2^22 proof x3, $variant"
  env "${envs[@]}" timeout 90 ./g16 prove --backend cuda --circuit synthetic --size 22 --partitions 3 --lock single \
    --gpu-workers-per-device 1 --synth-workers 3 --json --trace "/tmp/t-$variant.json" > "$OUT/prove22-$variant.json" 2>> "$OUT/staging.log"
  timeout 30 ./g16 timeline report "/tmp/t-$variant.json" > "$OUT/report-$variant.txt" 2>&1
  python3 -c "
import json; r=json.load(open('$OUT/prove22-$variant.json')); s=r['steps_ms']
print('$variant', 'GPU/proof', round(s['GPU']/3,1), 'stage/proof', round(s['stage']/3,1),
      {k: round(s.get(k,0)/3,1) for k in ('upload_a','upload_b','upload_c','upload_z')})" | tee -a "$OUT/staging.log"
  grep -E "upload_scalars" "$OUT/report-$variant.txt" | tee -a "$OUT/staging.log"
done
el "large suite"
G16_REQUIRE_CUDA=1 G16_CONFORMANCE=large timeout 240 ./backend_cuda --test-threads 1 > "$OUT/suite-large.log" 2>&1
el "large suite rc=$? $(grep -h 'test result' "$OUT/suite-large.log")"
