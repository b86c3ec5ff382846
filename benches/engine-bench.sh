#!/usr/bin/env bash
# The proving engine's benchmark matrix (issue 5), for the GPU machine: a job of
# $PARTITIONS partitions of the synthetic circuit at each size in $SIZES, every lock design
# in $LOCKS against every device-worker count in $WORKERS, on device 0 of $BACKEND; then,
# where the backend has two or more devices, the best-known configuration on one device
# against all of them (the multi-GPU scaling check). Each configuration is one JSON line
# of `g16 prove --json` (proofs/min, steady proofs/min, device busy per device, lock wait,
# stages, bottleneck, largest unattributed span, commit), appended to
# $OUT/engine-$BACKEND.jsonl; a table of them is printed at the end.
#
# Usage, from the repository root:
#   OUT=/some/dir benches/engine-bench.sh            # keys (once, cached), then the matrix
#   OUT=/some/dir SIZES=20 benches/engine-bench.sh   # one size per call, to fit a time limit
#
# Environment (defaults in brackets):
#   OUT          where results go (required)
#   G16          the g16 binary [built here: cargo build --release, target/release/g16]
#   BACKEND      cuda | wgpu | cpu [cuda]
#   SIZES        log2 sizes [20 22]
#   PARTITIONS   partitions per job [10]
#   LOCKS        [single,split]
#   WORKERS      device workers per device [1,2,3]
#   SYNTH        synthesis workers [the host's threads, at most 16: a 2^22 partition takes
#                ~4 s to synthesize on one thread of the H200 host against ~0.45 s of device
#                section, so 8 workers (the first run's figure) left one device short of work]
#   MULTI_SYNTH  synthesis workers of the scaling check [the host's threads less two: two
#                devices need twice the supply]
#   BOUND        channel bound [4]
#   MULTI_PARTITIONS  partitions per job of the scaling check [20]
#   MULTI_CONFIG      "--lock split --gpu-workers-per-device 2" [that]
#   TRACE        1: also write a Chrome trace per configuration into $OUT [0]
#   G16_CACHE_DIR     the key cache [target/g16-keys: ignored by git, so it survives
#                     between calls on a machine that keeps build outputs]
#
# Key generation (arkworks, on the CPU) takes minutes at 2^22; it happens once per size.
set -euo pipefail
cd "$(dirname "$0")/.."

: "${OUT:?set OUT to the results directory}"
BACKEND=${BACKEND:-cuda}
SIZES=${SIZES:-20 22}
PARTITIONS=${PARTITIONS:-10}
LOCKS=${LOCKS:-single,split}
WORKERS=${WORKERS:-1,2,3}
SYNTH=${SYNTH:-$(( $(nproc) < 16 ? $(nproc) : 16 ))}
MULTI_SYNTH=${MULTI_SYNTH:-$(( $(nproc) > 4 ? $(nproc) - 2 : $(nproc) ))}
BOUND=${BOUND:-4}
MULTI_PARTITIONS=${MULTI_PARTITIONS:-20}
MULTI_CONFIG=${MULTI_CONFIG:---lock split --gpu-workers-per-device 2}
TRACE=${TRACE:-0}
export G16_CACHE_DIR=${G16_CACHE_DIR:-$PWD/target/g16-keys}

mkdir -p "$OUT"
if [ -z "${G16:-}" ]; then
    cargo build --release --quiet
    G16=target/release/g16
fi
RESULTS="$OUT/engine-$BACKEND.jsonl"

echo "== $("$G16" --version), backend $BACKEND"
"$G16" devices | tee "$OUT/engine-devices.txt"
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee -a "$OUT/engine-devices.txt"
fi

# How many devices the backend has (for the scaling check; CUDA only, where nvidia-smi
# can say; other backends run on device 0 alone).
device_count() {
    if [ "$BACKEND" = cuda ] && command -v nvidia-smi >/dev/null; then
        nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true
    else
        echo 1
    fi
}

for size in $SIZES; do
    echo "== synthetic 2^$size: key"
    "$G16" setup --circuit synthetic --size "$size" >/dev/null
    trace_args=()
    if [ "$TRACE" = 1 ]; then trace_args=(--trace "$OUT/engine-$BACKEND-$size.json"); fi
    echo "== synthetic 2^$size: $PARTITIONS partitions, lock {$LOCKS} x workers {$WORKERS}, $SYNTH synthesis workers"
    "$G16" prove --circuit synthetic --size "$size" --partitions "$PARTITIONS" --devices "$BACKEND:0" \
        --lock "$LOCKS" --gpu-workers-per-device "$WORKERS" --synth-workers "$SYNTH" --channel-bound "$BOUND" \
        --json "${trace_args[@]}" | tee -a "$RESULTS"
    if [ "$(device_count)" -ge 2 ]; then
        for devices in "$BACKEND:0" "$BACKEND"; do
            echo "== synthetic 2^$size: $MULTI_PARTITIONS partitions on $devices ($MULTI_CONFIG)"
            # shellcheck disable=SC2086 # MULTI_CONFIG is a list of flags
            "$G16" prove --circuit synthetic --size "$size" --partitions "$MULTI_PARTITIONS" --devices "$devices" \
                $MULTI_CONFIG --synth-workers "$MULTI_SYNTH" --channel-bound "$BOUND" --json | tee -a "$RESULTS"
        done
    fi
done

echo "== table ($RESULTS)"
if command -v python3 >/dev/null; then
    python3 - "$RESULTS" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(f"{'size':>4} {'devices':>7} {'lock':>6} {'w':>2} {'proofs/min':>10} {'steady/min':>10} {'busy':>6} {'steady':>6} {'lock wait ms':>12}  bottleneck / largest unattributed span")
for r in rows:
    dev = r.get("devices") or []
    busy = max((d["share"] for d in dev), default=0)
    steady = max((d["steady_share"] for d in dev), default=0)
    big = r.get("largest_unattributed") or {}
    print(f"{r['size']:>4} {len(dev):>7} {r['lock']:>6} {r['workers_per_device']:>2} {r['proofs_per_min']:>10.1f} "
          f"{r['steady_proofs_per_min']:>10.1f} {busy*100:>5.1f}% {steady*100:>5.1f}% {r['lock_wait_ms']:>12.1f}  "
          f"{(r.get('bottleneck') or {}).get('stage', '-')} / {big.get('name', '-')} ({big.get('layer', '-')}) "
          f"{big.get('unattributed_ms', 0):.1f} ms")
PY
else
    echo "(no python3: the JSON lines are the results)"
fi
