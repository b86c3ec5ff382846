#!/bin/bash
# Issue 3, fourth session, call 1 (H200): G2's Fq2 product with lazy reduction.
# In order of importance:
#   1. A/B at 2^24, G1 and G2, 5 runs each: the new default (lazy Fq2 product) against the
#      old path (-DG16_FQ2_LAZY=0), each in one process.
#   2. Two experiment switches on top of the lazy product, G2 2^24, 3 runs each:
#      -DG16_FQ2_PAIRED=1 (two products a call) and -DG16_FQ2_MADD_INLINE=1 (no calls in the
#      madd).
#   3. The best variant (the default unless another is > 2 % faster on G2): the CUDA suite at CI
#      sizes and the large MSM tests, then G2 at 2^20..2^22 (3 runs).
# The kernel cache is prefilled here for every define set (prefill.py). JSON lines in
# $OUT/h200-cuda-msm-s4.jsonl, each with its variant.
cd "$(dirname "$0")"; D=$PWD
NVRTC_DIR="$(dirname "$(find / -name 'libnvrtc.so.13*' -not -path '/proc/*' 2>/dev/null | grep -v builtins | head -1)")"
export LD_LIBRARY_PATH="$NVRTC_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" G16_CACHE_DIR=$D/cache
J=$OUT/h200-cuda-msm-s4.jsonl
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
b() { local label=$1 t=$2; shift 2; echo "-- $label ${G16_CUDA_DEFINES:-}"; \
  timeout $t ./g16 bench --backends cuda --no-plot "$@" --json $OUT/tmp.jsonl 2>&1 | grep -E "msm|rror"; \
  sed "s/^{/{\"variant\":\"$label\",\"defines\":\"${G16_CUDA_DEFINES:-}\",/" $OUT/tmp.jsonl >> $J; rm -f $OUT/tmp.jsonl; }
echo "== A/B 2^24: lazy (default) vs eager"
b lazy-24 80 --ops msm-g1,msm-g2 --sizes 24 --runs 5
G16_CUDA_DEFINES="-DG16_FQ2_LAZY=0" b eager-24 80 --ops msm-g1,msm-g2 --sizes 24 --runs 5
echo "== switches, G2 2^24"
G16_CUDA_DEFINES="-DG16_FQ2_PAIRED=1" b paired-24 40 --ops msm-g2 --sizes 24 --runs 3
G16_CUDA_DEFINES="-DG16_FQ2_MADD_INLINE=1" b madd-inline-24 40 --ops msm-g2 --sizes 24 --runs 3
best=$(python3 -c "
import json
m={}
for l in open('$J'):
    j=json.loads(l)
    if j.get('op')=='msm-g2': m[j['variant']]=(j['median_ms'], j['defines'])
d=m.get('lazy-24',(1e9,''))[0]
v=min(m, key=lambda x:m[x][0]) if m else None
print(m[v][1] if v and m[v][0] < 0.98*d else '')" 2>&1)
echo "best defines: '${best}' (empty: the defaults)"
export G16_CUDA_DEFINES="$best"
echo "== conformance ($G16_CUDA_DEFINES): CI sizes, then large MSM"
G16_REQUIRE_CUDA=1 timeout 60 ./backend_cuda --test-threads=2 2>&1 | tee $OUT/suite-ci.log | grep -E "panicked|test result|FAILED|failed"
G16_REQUIRE_CUDA=1 G16_CONFORMANCE=large timeout 100 ./backend_cuda --test-threads=1 msm 2>&1 | tee $OUT/suite-large-msm.log \
  | grep -E "^test |panicked|test result"
echo "== G2 2^20..2^22"
b final-20-22 45 --ops msm-g2 --sizes 20..22 --runs 3
python3 - "$J" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    j = json.loads(l)
    ph = j.get('phases_ms') or {}
    print(f"{j['variant']:16s} {j['op']:7s} 2^{j['size']} median {j['median_ms']:8.2f} ms (min {j['min_ms']:.2f}) "
          + " ".join(f"{k.split('.')[-1]} {v:.1f}" for k, v in ph.items() if '.' in k))
PY
