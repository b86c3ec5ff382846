#!/bin/bash
# Issue 3, fourth session, call 2 (H200): y3 of G2's mixed addition as one double-width
# difference with two reductions (fq2_mul_sub, -DG16_FQ2_MULSUB, default on) against the lazy
# product alone (-DG16_FQ2_MULSUB=0, call 1's default). G1 and G2 2^24 with the default, G2
# 2^24 with the switch off, 5 runs each; then, with the faster (the default unless the other
# is faster), the CUDA suite at CI sizes and the large MSM tests, and G2 2^20..2^22.
# Kernel cache prefilled here (prefill.py). JSON lines in $OUT/h200-cuda-msm-s4.jsonl.
cd "$(dirname "$0")"; D=$PWD
NVRTC_DIR="$(dirname "$(find / -name 'libnvrtc.so.13*' -not -path '/proc/*' 2>/dev/null | grep -v builtins | head -1)")"
export LD_LIBRARY_PATH="$NVRTC_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" G16_CACHE_DIR=$D/cache
J=$OUT/h200-cuda-msm-s4.jsonl
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
b() { local label=$1 t=$2; shift 2; echo "-- $label ${G16_CUDA_DEFINES:-}"; \
  timeout $t ./g16 bench --backends cuda --no-plot "$@" --json $OUT/tmp.jsonl 2>&1 | grep -E "msm|rror"; \
  sed "s/^{/{\"variant\":\"$label\",\"defines\":\"${G16_CUDA_DEFINES:-}\",/" $OUT/tmp.jsonl >> $J; rm -f $OUT/tmp.jsonl; }
echo "== A/B 2^24: mul-sub (default) vs lazy product alone"
b mulsub-24 80 --ops msm-g1,msm-g2 --sizes 24 --runs 5
G16_CUDA_DEFINES="-DG16_FQ2_MULSUB=0" b lazy-only-24 60 --ops msm-g2 --sizes 24 --runs 5
best=$(python3 -c "
import json
m={}
for l in open('$J'):
    j=json.loads(l)
    if j.get('op')=='msm-g2': m[j['variant']]=j['median_ms']
print('-DG16_FQ2_MULSUB=0' if m.get('lazy-only-24',1e9) < m.get('mulsub-24',1e9) else '')" 2>&1)
echo "best defines: '${best}' (empty: the defaults)"
export G16_CUDA_DEFINES="$best"
echo "== conformance ($G16_CUDA_DEFINES): CI sizes, then large MSM"
G16_REQUIRE_CUDA=1 timeout 60 ./backend_cuda --test-threads=2 2>&1 | tee $OUT/suite-ci.log | grep -E "panicked|test result|FAILED|failed"
G16_REQUIRE_CUDA=1 G16_CONFORMANCE=large timeout 100 ./backend_cuda --test-threads=1 msm 2>&1 | tee $OUT/suite-large-msm.log \
  | grep -E "^test |panicked|test result"
echo "== G2 2^20..2^22"
b final2-20-22 45 --ops msm-g2 --sizes 20..22 --runs 3
python3 - "$J" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    j = json.loads(l)
    ph = j.get('phases_ms') or {}
    print(f"{j['variant']:16s} {j['op']:7s} 2^{j['size']} median {j['median_ms']:8.2f} ms (min {j['min_ms']:.2f}) "
          + " ".join(f"{k.split('.')[-1]} {v:.1f}" for k, v in ph.items() if '.' in k))
PY
