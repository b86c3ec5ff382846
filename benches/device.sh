#!/usr/bin/env bash
# The GPU machine's checks and benchmarks, in two halves.
#
# Here (no GPU needed), from the repository root:
#   benches/device.sh prepare [BEFORE_CHECKOUT]
#       release g16, the GPU backends' test binaries and the CUDA kernels compiled for sm_90,
#       stripped and compressed into .device/ (ignored by git; the device tool carries it: carry
#       [".device", ".gl"]; every stage unpacks them first).
#       With BEFORE_CHECKOUT (a worktree of another commit, built with `cargo build --release`
#       there), its g16 and kernels go to .device/before/, for same-machine comparisons. Build
#       each tree into its own target directory: with one CARGO_TARGET_DIR for both, cargo can
#       take the other tree's artifacts as fresh (a path package's hash does not name the tree,
#       and a checkout's files older than the artifacts look unchanged), and both binaries then
#       embed one tree's kernels (prepare stops when the two caches' CUBIN names agree although
#       kernels/ differs).
# There, from the repository root (every stage writes its logs and JSON lines under $OUT):
#   bash benches/device.sh STAGE...
#       env       Vulkan loaders from .gl/, NVRTC on the loader path, what the machine has
#       suite     the conformance suites at the GPU machine's sizes: the operations' half on
#                 CUDA and on wgpu (both arithmetic paths), the proofs' half (g16/tests/
#                 conformance.rs) on both, wgpu's device tests (G16_REQUIRE_* set: a missing
#                 backend fails); SUITE=ci: at CI's sizes
#       bench     g16 bench, CUDA and wgpu: MSM G1/G2 2^20–2^24, NTT 2^22–2^24, scalar
#                 uploads 2^20–2^24; with
#                 .device/before, each case runs before/after back to back
#       prove     traced proofs (CUDA synthetic 2^22, wgpu synthetic 2^20) and their reports
#       engine    the engine matrix: lock designs × device workers at SIZES, and one GPU
#                 against all of them where there are several
#       compiled  compiled circuits: the conformance suites at CI sizes (sparse products, the
#                 R1CS check, the odd coset, the compiled path, arkworks' gadgets), a snarkjs
#                 zkey proven on CUDA, then A·z, whole proofs against arkworks, synthesis
#                 against witness alone, and the engine at 2^22 on 4 witness workers
#       serve     the proving service on one device: one proof's latency through it against
#                 the same proof in process from an assignment in memory, and its throughput
#                 under load against the in-process engine, synthetic 2^20 and 2^22 (compiled
#                 circuits; SIZES picks, SKIP_CLI skips `g16 prove` from the files)
#       circom    a generated circuit at 2^SIZE (default 20) from one zkey that `g16 setup
#                 --zkey` made: `g16 prove --zkey` on CUDA against `snarkjs groth16 prove` on
#                 the host's CPUs, both verified by snarkjs (node and snarkjs on PATH)
#       ntt_stability  the wgpu NTT at 2^22–2^24 in three fresh processes (median, min, max
#                 of 15 runs each), and CUDA's beside it
#       front     CUDA's kernel launches on the GPU (the conformance suites at CI sizes), then
#                 MSM G1 and NTT at 2^24 on CUDA and a 2^22 proof from an assignment on CUDA
#                 and wgpu: what a change to the crates' wiring must not slow
#       pcie      the GPU's PCIe traffic and memory in use (nvidia-smi dmon) while the wgpu NTT runs
#                 at 2^22 and 2^24, and CUDA's at 2^24
#       witness   the assignment on the host (the native generator against witness-only
#                 synthesis) at 2^20–2^22, and whole CUDA proofs from it against their device
#                 section at 2^20 and 2^22
#       first     a first proof against the steady ones (--warmup 0: first_ms against the
#                 median) on CUDA and wgpu at 2^22, and traced 2^22 proofs on both (compiled
#                 circuit, 3 partitions) with their reports
#       keygen    memory plans (2^22–2^27 on the H200, 2^22–2^25 on a 24 GiB card) and key
#                 generation on CUDA at 2^22 and 2^24 with its host and device phases
#       keys      a key's way to its first proof: g16 bench first-proof (a key file, every check on
#                 the device, then the digest known) on CUDA at 2^20 and 2^22 and wgpu at 2^20
#                 (its checks on the device, then on the host: G16_WGPU_SUBGROUP);
#                 `g16 prove --zkey` of a 2^20 zkey and `--key` of a 2^20 arkworks key in fresh
#                 processes, first and again (digest recorded; every build in .device/*/g16 in
#                 turn with this one); the key store at 2^22 in fresh
#                 processes (KEYS_24=1: at 2^24 too; KEYS_NO_BENCH=1: without the bench's
#                 first-proof; KEYS_NO_STORE=1: without the key store at 2^22); with
#                 KEYS_SERVE=1 the register stage
#       register  a 2^22 zkey registered with `g16 serve` and its first proof, first and again,
#                 then the same file by path on the server (--on-server); the key prepared as it
#                 is registered and (--prepare-on-first-job) not
#       scale     g16 bench prove-assignment from FROM to TO (default 16..24) on BACKENDS
#                 (default cuda wgpu), each size's key made on the device and kept in memory
#                 (from 2^27 made straight into the resident bases: --keys-on-device); wall
#                 time and peak host memory beside each; MOSTLY_BITS=1: the synthetic circuit's
#                 PoRep-like assignment (g16 bench --mostly-bits)
#       filecoin  Filecoin PoRep C2 for SECTORS (default 2KiB): the parameters made from the
#                 project's seed and a sector sealed by .device/fil-harness
#                 (benches/filecoin-harness), then C2 by `g16 filecoin c2` on CUDA (fresh: every
#                 point checked on the device, the circuit compiled; again: digest and circuit
#                 cached; each process proves it 1 + RUNS times, the key resident after the
#                 first) and wgpu, by bellperson on the host's cores and by bellperson with
#                 supraseal (.device/fil-harness-supraseal, where present), each output accepted
#                 by verify_seal; with BIT_EXACT=1 the 2 KiB C2 equal to bellperson's on CUDA
#                 and wgpu (filecoin/tests/c2.rs, the tests CI's time cannot hold)
#       strides   the wgpu NTT's memory traffic alone: copies in its pass's tiles at each stride,
#                 2^FROM..2^TO (default 20..24), a buffer an array and one allocation, two
#                 processes each, into strides.jsonl (examples/strided_copy.rs)
#       anchors   sppark beside g16 in the same call (benches/anchors/sppark, built here into
#                 .device/anchors/sppark/bin): G1 MSM at SIZES (default "20 22 24") with the bases
#                 resident and the scalars copied from host memory inside each timed call on
#                 both sides (sppark's resident-points mode, g16's msm-g1-host), and g16's with
#                 its scalars already on the device (msm-g1); the Fr NTT of data already on the
#                 device from 2^NTT_FROM to 2^NTT_TO (default 20..24; sppark NN and NR, g16's
#                 device time; again with split twiddle tables into
#                 anchors-ntt-split-twiddles.jsonl, and in blocks of 512 elements into
#                 anchors-ntt-512.jsonl). Every other line goes to anchors.jsonl in
#                 the bench schema
#       ab        settings against each other in alternating fresh processes: each of VARIANTS
#                 (';' between variants, each a list of NAME=VALUE, empty for the defaults:
#                 VARIANTS=";G16_CUDA_MSM_ACCUMULATION=buckets" is the defaults against one) runs
#                 `g16 bench --backends cuda --ops OPS --sizes SIZES` (default msm-g1, 22..24),
#                 ROUNDS times in turn (default 2), into ab.jsonl, whose lines name their
#                 settings (BENCH_ARGS: more of g16 bench's arguments, as "--keys-on-device
#                 --mostly-bits" for proofs); then each variant's medians by op and size, its
#                 phases beside them
#       tests     the CUDA backend's GPU tests whose names hold a word of FILTER (default: all), at
#                 CI's sizes (LARGE=1: the GPU machine's)
# Each step runs under its own timeout, so one slow step cannot starve the rest.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
D="$ROOT/.device"

nvrtc_wheel_lib() {
  python3 -c "import nvidia, os; print(os.path.join(os.path.dirname(nvidia.__path__[0]), 'nvidia', 'cu13', 'lib'))" 2>/dev/null
}

# The test binary cargo built for `--test NAME` of package PKG.
test_binary() {
  local pkg=$1 name=$2
  cargo test --release --no-run -p "$pkg" --test "$name" --message-format=json 2>/dev/null |
    python3 -c 'import json,sys; n=sys.argv[1]; print([j["executable"] for j in map(json.loads, sys.stdin) if j.get("executable") and j["target"]["name"] == n][-1])' "$name"
}

prepare() {
  local before="${1:-}"
  cd "$ROOT" || exit 1
  export LD_LIBRARY_PATH="$(nvrtc_wheel_lib)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  cargo build --release --bin g16 || exit 1
  # The Filecoin harness is built on its own (benches/filecoin-harness/README.md): kept.
  # The anchors too (benches/anchors/sppark/README.md).
  find "$D" -mindepth 1 -maxdepth 1 ! -name 'fil-harness*' ! -name anchors -exec rm -rf {} + 2>/dev/null
  mkdir -p "$D/cache"
  cp "${CARGO_TARGET_DIR:-$ROOT/target}/release/g16" "$D/g16"
  cp "$(test_binary g16-cuda backend)" "$D/cuda_backend"
  cp "$(test_binary g16-wgpu backend)" "$D/wgpu_backend"
  cp "$(test_binary g16-wgpu device)" "$D/wgpu_device"
  cp "$(test_binary g16 conformance)" "$D/proof_conformance"
  cp "$(test_binary g16-filecoin c2)" "$D/filecoin_c2"
  cargo build --release -q -p g16-wgpu --example strided_copy || exit 1
  cp "${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/strided_copy" "$D/strided_copy"
  git -C "$ROOT" rev-parse --short=10 HEAD >"$D/commit"  # the examples carry no stamp of their own
  cargo run --release -q -p g16-cuda --example fill_cache -- "$D/cache/cuda" sm_90 || exit 1
  # The CUDA test binary caches kernels under the target's tmp dir (CARGO_TARGET_TMPDIR, fixed
  # at build time): the suite stage copies the kernels there so no test compiles them.
  echo "${CARGO_TARGET_DIR:-$ROOT/target}/tmp/cuda-kernels" >"$D/cuda-test-kernels-dir"
  echo "${CARGO_TARGET_DIR:-$ROOT/target}/tmp/g16-cache/cuda" >>"$D/cuda-test-kernels-dir"
  if [ -n "$before" ]; then
    mkdir -p "$D/before/cache"
    cp "$before/target/release/g16" "$D/before/g16" 2>/dev/null ||
      cp "${CARGO_TARGET_DIR:-$before/target}/release/g16" "$D/before/g16" || exit 1
    # Its own kernel cache: its kernels' sources differ, so their cache files do too.
    (cd "$before" && G16_CACHE_DIR="$D/before/cache" cargo run --release -q -p g16-cuda --example fill_cache -- sm_90) ||
      (cd "$before" && cargo run --release -q -p g16-cuda --example fill_cache -- "$D/before/cache/cuda" sm_90) || exit 1
  fi
  # Two builds from one target directory can embed one tree's kernels (see above): then their
  # kernels' cache names agree although kernels/ differs between the trees.
  if [ -n "$before" ] && ! git -C "$ROOT" diff --quiet "$(git -C "$before" rev-parse HEAD)" -- kernels &&
    [ "$(ls "$D/cache/cuda")" = "$(ls "$D/before/cache/cuda")" ]; then
    echo "kernels/ differs between $before and this tree, but both builds compiled the same kernels:" \
      "build each tree into its own target directory" >&2
    exit 1
  fi
  strip "$D"/g16 "$D"/cuda_backend "$D"/wgpu_backend "$D"/wgpu_device "$D"/proof_conformance "$D"/filecoin_c2 \
    "$D"/strided_copy ${before:+"$D/before/g16"}
  # The carry holds 64 MiB: every binary goes compressed (a quarter of its size), and the env
  # stage unpacks it there.
  xz -T0 -6 -f "$D"/g16 "$D"/cuda_backend "$D"/wgpu_backend "$D"/wgpu_device "$D"/proof_conformance \
    "$D"/filecoin_c2 "$D"/strided_copy ${before:+"$D/before/g16"} || exit 1
  du -sh "$D"
}

# Unpacks the binaries prepare compressed (`NAME.xz` beside where NAME goes), once.
unpack() {
  local packed
  while read -r packed; do
    [ -e "${packed%.xz}" ] && continue
    if command -v xz >/dev/null; then
      xz -dk "$packed"
    else
      python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
        "$packed" "${packed%.xz}"
    fi
    chmod +x "${packed%.xz}"
  done < <(find "$D" -name '*.xz')
}

env_stage() {
  OUT="${OUT:-/tmp/out}"
  mkdir -p "$OUT"
  unpack
  if [ -d "$ROOT/.gl" ] && ! ldconfig -p | grep -q libvulkan; then
    for f in "$ROOT"/.gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
  fi
  local nvrtc
  nvrtc="$(find / -name 'libnvrtc.so.13*' -not -path '/proc/*' 2>/dev/null | grep -v builtins | head -1)"
  [ -n "$nvrtc" ] && export LD_LIBRARY_PATH="$(dirname "$nvrtc")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export G16_CACHE_DIR="$D/cache" RUST_BACKTRACE=1
  if ! "$D/g16" devices 2>/dev/null | grep -q "wgpu  available"; then
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
    export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
  fi
  {
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
    "$D/g16" devices
  } 2>&1 | tee "$OUT/devices.txt"
}

step() { # step SECONDS NAME COMMAND...: one timed step of a stage, its output kept in $OUT/NAME.txt
  local limit=$1 name=$2 start=$SECONDS
  shift 2
  echo "== [$((SECONDS))] $name"
  timeout "$limit" "$@" >"$OUT/$name.txt" 2>&1
  local rc=$?
  grep -E "^test result|FAILED|panicked|^error" "$OUT/$name.txt" | head -20
  echo "   $name: exit $rc, $((SECONDS - start)) s"
}

# The test binaries cache kernels under the build's tmp dir (CARGO_TARGET_TMPDIR, fixed at build
# time): the kernels compiled here go there, so no test compiles them.
test_kernels() {
  local kernels
  while read -r kernels; do
    [ -n "$kernels" ] && mkdir -p "$kernels" && cp "$D"/cache/cuda/*.cubin "$kernels/"
  done <"$D/cuda-test-kernels-dir"
}

tests() {
  export G16_REQUIRE_CUDA=1
  [ -n "${LARGE:-}" ] && export G16_CONFORMANCE=large
  test_kernels
  # shellcheck disable=SC2086 # FILTER: test names, a space between, each a substring
  step 300 tests-cuda "$D/cuda_backend" --test-threads=1 ${FILTER:-}
}

suite() {
  export G16_REQUIRE_CUDA=1 G16_REQUIRE_WGPU=1 G16_CONFORMANCE=large
  # SUITE=ci: CI's sizes (a minute, not several), for a call whose time goes to other stages.
  [ "${SUITE:-}" = ci ] && unset G16_CONFORMANCE
  test_kernels
  step 300 suite-cuda "$D/cuda_backend" --test-threads=1
  step 300 proofs-cuda "$D/proof_conformance" --test-threads=1 cuda_proofs
  step 300 proofs-wgpu "$D/proof_conformance" --test-threads=1 wgpu_proofs --skip u32_path
  step 240 suite-wgpu "$D/wgpu_backend" --test-threads=1 --skip u32_path
  step 120 device-wgpu "$D/wgpu_device" --test-threads=1
  # The 32-bit path differs only in its limb products: CI's sizes cover it (SKIP_U32=1 skips it).
  unset G16_CONFORMANCE
  [ -n "${SKIP_U32:-}" ] || step 240 suite-wgpu-u32 "$D/wgpu_backend" --test-threads=1 u32_path
}

bench() {
  local json="$OUT/bench.jsonl" bins=("$D/g16")
  [ -x "$D/before/g16" ] && bins=("$D/before/g16" "$D/g16")
  local cases=(
    "msm-g1 20..24 5" "msm-g2 20..22 5" "msm-g2 24 3" "ntt 22..24 7" "upload 20..24 5"
  )
  for backend in cuda wgpu; do
    for c in "${cases[@]}"; do
      set -- $c
      for bin in "${bins[@]}"; do
        local cache="$D/cache" tag=after
        [ "$bin" = "$D/before/g16" ] && cache="$D/before/cache" tag=before
        echo "== [$SECONDS] $tag $backend $1 2^$2"
        G16_CACHE_DIR="$cache" timeout 150 "$bin" bench --backends "$backend" --ops "$1" --sizes "$2" --runs "$3" \
          --json "$OUT/bench-$tag.jsonl" 2>&1 | grep -v "^\s*$" | tail -n +2
      done
    done
  done
  cat "$OUT"/bench-*.jsonl >"$json" 2>/dev/null
}

prove() {
  step 240 prove-cuda-22 "$D/g16" prove --backend cuda --circuit synthetic --size 22 --partitions 3 \
    --trace "$OUT/prove-cuda-22.trace.json"
  step 200 prove-wgpu-20 "$D/g16" prove --backend wgpu --circuit synthetic --size 20 --partitions 3 \
    --trace "$OUT/prove-wgpu-20.trace.json"
  gzip -f "$OUT"/prove-*.trace.json 2>/dev/null
}

# The engine matrix: a job of $PARTITIONS synthetic partitions at each size in $SIZES, every
# lock design in $LOCKS against every worker count in $WORKERS, on device 0 of $BACKEND;
# where the backend has several devices, one device against all of them. One JSON line of
# `g16 prove --json` per configuration in $OUT/engine.jsonl.
engine() {
  local backend=${BACKEND:-cuda} sizes=${SIZES:-20 22} partitions=${PARTITIONS:-10}
  local locks=${LOCKS:-single,split} workers=${WORKERS:-1,2,3} prefill=${PREFILL:-0}
  local synth=${SYNTH:-$(($(nproc) < 16 ? $(nproc) : 16))} bound=${BOUND:-12}
  local gpus
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  for size in $sizes; do
    step 300 "setup-$size" "$D/g16" setup --circuit synthetic --size "$size"
    timeout 500 "$D/g16" prove --circuit synthetic --size "$size" --partitions "$partitions" --devices "$backend:0" \
      --lock "$locks" --gpu-workers-per-device "$workers" --synth-workers "$synth" --channel-bound "$bound" \
      --prefill "$prefill" --json | tee -a "$OUT/engine.jsonl"
    if [ "$backend" = cuda ] && [ "${gpus:-1}" -ge 2 ]; then
      for devices in "$backend:0" "$backend"; do
        timeout 500 "$D/g16" prove --circuit synthetic --size "$size" --partitions $((2 * partitions)) \
          --devices "$devices" --lock split --gpu-workers-per-device 2 --synth-workers "$synth" \
          --channel-bound "$bound" --prefill "$prefill" --json | tee -a "$OUT/engine.jsonl"
      done
    fi
  done
}

compiled() {
  local kernels
  kernels="$(cat "$D/cuda-test-kernels-dir" 2>/dev/null)"
  [ -n "$kernels" ] && mkdir -p "$kernels" && cp "$D"/cache/cuda/*.cubin "$kernels/"
  G16_REQUIRE_CUDA=1 step 150 suite-cuda-ci "$D/cuda_backend" --test-threads=1
  G16_REQUIRE_WGPU=1 step 120 suite-wgpu-compiled "$D/wgpu_backend" --test-threads=1 --skip u32_path \
    spmv first_unsatisfied gadget proofs_match
  step 60 circom-cuda "$D/g16" prove --zkey "$ROOT/tests/circom/fixtures/small.zkey" \
    --wtns "$ROOT/tests/circom/fixtures/small.wtns" --backend cuda --out "$OUT/circom-cuda"
  local json="$OUT/compiled.jsonl"
  b() { echo "== [$SECONDS] bench $*"; timeout 200 "$D/g16" bench --json "$json" "$@" 2>&1 | grep -v "^\s*$"; }
  b --backends cuda --ops prove,prove-witness,prove-arkworks --sizes 20 --runs 3
  b --backends cuda --ops spmv --sizes 20..22 --runs 7
  b --backends cuda --ops prove,prove-witness --sizes 22 --runs 3
  timeout 200 "$D/g16" prove --circuit synthetic --size 22 --partitions 12 --devices cuda:0 --lock split \
    --gpu-workers-per-device 2 --synth-workers 4 --json | tee -a "$OUT/engine-witness.jsonl"
  for circuit in synthetic poseidon sha256; do
    b --backends cpu --ops synth-full,synth-witness --circuit "$circuit" --sizes 20..22 --warmup 0 --runs 3
  done
  b --backends cuda --ops prove,prove-witness,prove-arkworks --circuit sha256 --sizes 20 --runs 3
  b --backends cuda --ops spmv --sizes 24 --runs 5
}

serve() {
  local w="$ROOT/.serve-work" addr=127.0.0.1:7316
  mkdir -p "$w"
  local sizes=${SIZES:-20 22}
  for size in $sizes; do
    step 300 "serve-setup-$size" bash -c "'$D/g16' setup --circuit synthetic --size $size --out '$w/k$size.pk' &&
      '$D/g16' compile --circuit synthetic --size $size --out '$w/c$size.circ' &&
      '$D/g16' witness --circuit synthetic --size $size --out '$w/w$size.wtns'"
    # What one proof costs in process, from an assignment in memory (the service's comparison)
    # and with the witness generated in the timed call.
    echo "== [$SECONDS] bench prove-assignment $size"
    timeout 200 "$D/g16" bench --json "$OUT/serve-bench.jsonl" --backends cuda \
      --ops prove-witness,prove-assignment --sizes "$size" --runs 5 2>&1 | grep -v "^\s*$"
    [ -n "${SKIP_CLI:-}" ] || step 120 "serve-cli-$size" "$D/g16" prove --compiled "$w/c$size.circ" --witness "$w/w$size.wtns" --key "$w/k$size.pk" \
      --backend cuda --out "$w/p$size"
    local partitions=$((size == 20 ? 96 : 32))
    timeout 300 "$D/g16" prove --circuit synthetic --size "$size" --partitions "$partitions" --devices cuda:0 --lock split \
      --gpu-workers-per-device 2 --synth-workers 4 --json | tee -a "$OUT/serve-engine.jsonl" | cut -c1-300
    # A server per size, so one size's resident key does not squeeze the other's.
    "$D/g16" serve --devices cuda:0 --listen "$addr" --metrics 127.0.0.1:7317 --witness-budget-mib 16384 >"$OUT/serve-$size.log" 2>&1 &
    local server=$!
    sleep 3
    local c=("$D/g16" client --server "http://$addr")
    step 400 "serve-register-$size" "${c[@]}" register --name "s$size" --compiled "$w/c$size.circ" --key "$w/k$size.pk"
    "${c[@]}" load --circuit "s$size" --witness "$w/w$size.wtns" --jobs 3 --clients 1 >/dev/null # warm: key resident
    "${c[@]}" load --circuit "s$size" --witness "$w/w$size.wtns" --jobs 8 --clients 1 --json "$OUT/serve.jsonl"
    local jobs=$((size == 20 ? 192 : 48)) clients=$((size == 20 ? 16 : 8))
    "${c[@]}" load --circuit "s$size" --witness "$w/w$size.wtns" --jobs "$jobs" --clients "$clients" --json "$OUT/serve.jsonl"
    "${c[@]}" status | tee "$OUT/serve-status-$size.txt"
    curl -s 127.0.0.1:7317/metrics >"$OUT/serve-metrics-$size.txt" 2>/dev/null
    kill -TERM "$server"
    wait "$server"
    echo "   g16 serve exit: $?"
  done
}

circom() {
  # A generated circuit (the synthetic one) at 2^SIZE, one zkey made by `g16 setup --zkey`, the
  # witness as a .wtns: `g16 prove --zkey --wtns` on CUDA against `snarkjs groth16 prove` on
  # this host's CPUs, each proof checked by `snarkjs groth16 verify`. Needs node and snarkjs
  # (SNARKJS names its command).
  local w="$ROOT/.serve-work" size=${SIZE:-20} sj=${SNARKJS:-snarkjs}
  mkdir -p "$w" && cd "$w" || return
  step 300 "circom-setup-$size" bash -c "'$D/g16' setup --circuit synthetic --size $size --zkey s$size.zkey &&
    '$D/g16' witness --circuit synthetic --size $size --out s$size.wtns && $sj zkey export verificationkey s$size.zkey vk$size.json"
  cat "$OUT/circom-setup-$size.txt" | grep -v "^\s*$" | tail -3
  step 300 "circom-g16-$size" "$D/g16" prove --zkey "s$size.zkey" --wtns "s$size.wtns" --backend cuda --out "g16-$size"
  tail -2 "$OUT/circom-g16-$size.txt"
  step 60 "circom-g16-verify-$size" $sj groth16 verify "vk$size.json" "g16-$size/public.json" "g16-$size/proof.json"
  tail -1 "$OUT/circom-g16-verify-$size.txt"
  step 400 "circom-snarkjs-$size" bash -c "TIMEFORMAT='snarkjs groth16 prove: wall %R s, user %U s, sys %S s';
    time $sj groth16 prove s$size.zkey s$size.wtns sj-$size-proof.json sj-$size-public.json"
  tail -1 "$OUT/circom-snarkjs-$size.txt"
  step 60 "circom-snarkjs-verify-$size" $sj groth16 verify "vk$size.json" "sj-$size-public.json" "sj-$size-proof.json"
  tail -1 "$OUT/circom-snarkjs-verify-$size.txt"
  cd "$ROOT" || return
}

ntt_stability() {
  # The wgpu NTT from call to call: the same benchmark in three fresh processes (each its own
  # device, pipelines and buffers), each with its median, fastest and slowest of 15 runs, and
  # CUDA once beside it.
  local json="$OUT/ntt-stability.jsonl"
  for call in 1 2 3; do
    echo "== [$SECONDS] wgpu ntt, process $call"
    timeout 120 "$D/g16" bench --backends wgpu --ops ntt --sizes 22..24 --runs 15 --json "$json" 2>&1 |
      grep -v "^\s*$" | tail -n +2
  done
  echo "== [$SECONDS] cuda ntt"
  timeout 120 "$D/g16" bench --backends cuda --ops ntt --sizes 22..24 --runs 15 --json "$json" 2>&1 |
    grep -v "^\s*$" | tail -n +2
}

pcie() {
  # Where a slow wgpu NTT's bytes go: the GPU's PCIe traffic and memory in use (nvidia-smi,
  # once a second) while the NTT runs at 2^22 alone (fast), at 2^24 (slow), and CUDA's beside.
  local size backend
  for run in "wgpu 22" "wgpu 24" "cuda 24"; do
    set -- $run
    echo "== [$SECONDS] $1 ntt 2^$2, 40 runs, with nvidia-smi dmon"
    nvidia-smi dmon -s tm -d 1 >"$OUT/pcie-$1-$2.txt" 2>&1 &
    local mon=$!
    sleep 2
    timeout 90 "$D/g16" bench --backends "$1" --ops ntt --sizes "$2" --runs 40 2>&1 | grep "device ms"
    sleep 2
    kill "$mon" 2>/dev/null; wait "$mon" 2>/dev/null
    head -2 "$OUT/pcie-$1-$2.txt"; tail -14 "$OUT/pcie-$1-$2.txt"
  done
}

witness() {
  local json="$OUT/witness.jsonl"
  b() { echo "== [$SECONDS] bench $*"; timeout 300 "$D/g16" bench --json "$json" "$@" 2>&1 | grep -v "^\s*$"; }
  b --backends cpu --ops witness,synth-witness --sizes 20..22 --runs 5
  for size in 20 22; do
    b --backends cuda --ops prove-witness,prove-assignment --sizes "$size" --runs 5
  done
}

first() {
  local json="$OUT/first.jsonl"
  echo "== [$SECONDS] first and steady proofs"
  timeout 400 "$D/g16" bench --json "$json" --backends cuda,wgpu --ops prove-assignment --sizes 22 \
    --warmup 0 --runs 4 2>&1 | grep -v "^\s*$"
  for backend in cuda wgpu; do
    step 300 "prove-$backend-22" "$D/g16" prove --backend "$backend" --circuit synthetic --size 22 --partitions 3 \
      --synthesis witness --trace "$OUT/prove-$backend-22.trace.json"
  done
  gzip -f "$OUT"/prove-*.trace.json 2>/dev/null
}

# COMMAND with its wall time and peak host memory after it (GNU time where the machine has it).
front() {
  # CUDA's launches through its kernel table on the GPU (both halves of the conformance suite at
  # CI sizes, the proofs' half on wgpu too), then what must not regress: MSM G1 (scalars on the
  # device and uploaded in the call) and the NTT at 2^24 on CUDA, and a 2^22 proof from an
  # assignment on CUDA and wgpu, each key made on the device and kept in memory.
  local json="$OUT/front.jsonl"
  export G16_REQUIRE_CUDA=1 G16_REQUIRE_WGPU=1
  test_kernels
  step 150 suite-cuda-ci "$D/cuda_backend" --test-threads=1
  step 150 proofs-ci "$D/proof_conformance" --test-threads=1 --skip u32_path
  timeout 120 "$D/g16" bench --json "$json" --backends cuda --ops msm-g1,msm-g1-host,ntt --sizes 24 --runs 7 2>&1 |
    grep -v "^\s*$"
  timeout 200 "$D/g16" bench --json "$json" --backends cuda,wgpu --ops prove-assignment --sizes 22 --runs 5 \
    --keys-in-memory 2>&1 | grep -v "^\s*$"
}

timed() {
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f "   %e s wall, %M KB peak host memory" "$@"
  else
    local start=$SECONDS
    "$@"
    echo "   $((SECONDS - start)) s wall"
  fi
}

# written OUT_DIR COMMAND...: a one-proof command that writes OUT_DIR/proof.json, timed; then
# when its proof was written, counted from just before the process started (the file's mtime):
# a fresh process's time to its first proof, without the release and exit that follow it.
written() {
  local out=$1 t0
  shift
  rm -f "$out/proof.json"
  t0=$(date +%s%N)
  timed "$@"
  python3 -c "import os,sys
print(f'   proof.json written {(os.stat(sys.argv[2]).st_mtime_ns - int(sys.argv[1])) / 1e6:.0f} ms after the start')" \
    "$t0" "$out/proof.json" 2>&1 | tail -1
}

keygen() {
  echo "== [$SECONDS] memory plans"
  for size in 22 24 26 27; do "$D/g16" plan --circuit synthetic --backend cuda --size "$size" 2>&1 | tail -n 2; done
  for size in 22 24 25; do "$D/g16" plan --circuit synthetic --memory-gib 24 --size "$size" 2>&1 | tail -n 1; done
  for size in 22 24; do
    echo "== [$SECONDS] setup cuda 2^$size (seed 1: kept in memory, written nowhere)"
    timed timeout 300 "$D/g16" setup --backend cuda --circuit synthetic --size "$size" --seed 1 2>&1 | grep -v "^\s*$"
  done
}

# key_store SIZE PARTITIONS MAKE_LIMIT RUN_LIMIT: the key store's synthetic 2^SIZE key (and
# compiled circuit) made by a first run, then two fresh processes' first job and its phases.
key_store() {
  local size=$1 partitions=$2
  step "$3" "keys-store-$size-make" "$D/g16" prove --backend cuda --circuit synthetic --size "$size" --partitions 1
  tail -3 "$OUT/keys-store-$size-make.txt"
  for run in 1 2; do
    echo "== [$SECONDS] key store 2^$size, a fresh process ($run)"
    timed timeout "$4" "$D/g16" prove --backend cuda --circuit synthetic --size "$size" --partitions "$partitions" \
      --synthesis witness 2>&1 |
      grep -E "^(open_backend|load_key|load_circuit|prepare_key|job) |upload_bases|shift_bases|subgroup|proofs/min| s wall"
  done
}

keys() {
  local w="$ROOT/.keys-work" json="$OUT/keys.jsonl"
  # The work directory's cache (where the key store and the checked-files record live) starts
  # with the kernels compiled here, so no process compiles them.
  mkdir -p "$w/cache"
  cp -rn "$D/cache/." "$w/cache/" 2>/dev/null
  export G16_CACHE_DIR="$w/cache"
  echo "== [$SECONDS] first-proof, CUDA 2^20 and 2^22, wgpu 2^20 (keys made on the device, written to a file)"
  [ -n "${KEYS_NO_BENCH:-}" ] ||
    timeout 300 "$D/g16" bench --json "$json" --backends cuda --ops first-proof --sizes 20..22 --runs 2 --warmup 0 \
      --keys-in-memory 2>&1 | grep -v "^\s*$"
  # wgpu: the subgroup checks on the device (the default on a GPU), then on the host's cores.
  for place in device host; do
    [ -n "${KEYS_NO_WGPU:-}" ] || G16_WGPU_SUBGROUP=$place timeout 200 "$D/g16" bench --json "$json" --backends wgpu \
      --ops first-proof --sizes 20 --runs 1 --warmup 0 --keys-in-memory 2>&1 | grep -v "^\s*$"
  done
  step 300 keys-files-20 bash -c "'$D/g16' setup --circuit synthetic --size 20 --seed 1 --zkey '$w/s20.zkey' &&
    '$D/g16' setup --circuit synthetic --size 20 --seed 1 --out '$w/k20.key' &&
    '$D/g16' compile --circuit synthetic --size 20 --out '$w/c20.circ' &&
    '$D/g16' witness --circuit synthetic --size 20 --out '$w/s20.wtns'"
  ls -la "$w"
  # The floor of the "same file again" row: the files' read time, page cache warm.
  # dd reads into one reused buffer; python3 into fresh memory the size of the file, as a
  # reader that keeps the bytes does (fs::read).
  for f in k20.key s20.zkey; do
    echo "== [$SECONDS] $f read (page cache warm): dd bs=16M twice, then python3's read() twice"
    dd if="$w/$f" of=/dev/null bs=16M 2>&1 | tail -1
    dd if="$w/$f" of=/dev/null bs=16M 2>&1 | tail -1
    python3 -c "import sys,time
for _ in range(2):
    t=time.perf_counter(); b=open(sys.argv[1],'rb').read(); print(f'   read() {len(b)} bytes in {(time.perf_counter()-t)*1e3:.0f} ms'); del b" "$w/$f"
  done
  for run in first again; do
    echo "== [$SECONDS] g16 prove --zkey 2^20 ($run), a fresh process"
    written "$w/z20-$run" timeout 200 "$D/g16" prove --zkey "$w/s20.zkey" --wtns "$w/s20.wtns" --backend cuda \
      --out "$w/z20-$run" 2>&1 | tail -4
    echo "== [$SECONDS] g16 prove --key 2^20 ($run), a fresh process"
    written "$w/k20-$run" timeout 200 "$D/g16" prove --compiled "$w/c20.circ" --witness "$w/s20.wtns" \
      --key "$w/k20.key" --backend cuda --out "$w/k20-$run" 2>&1 | tail -4
  done
  # With other builds beside it (.device/before/g16, .device/<variant>/g16): the files again
  # (digest known), each build in turn, alternating.
  local bins=() bin
  for bin in "$D"/*/g16; do [ -x "$bin" ] && bins+=("$bin"); done
  if [ ${#bins[@]} -gt 0 ]; then
    for run in 1 2; do
      for bin in "${bins[@]}" "$D/g16"; do
        echo "== [$SECONDS] $bin prove --zkey 2^20 (again, A/B $run), a fresh process"
        written "$w/z20-ab" timeout 200 "$bin" prove --zkey "$w/s20.zkey" --wtns "$w/s20.wtns" --backend cuda \
          --out "$w/z20-ab" 2>&1 | tail -3
        echo "== [$SECONDS] $bin prove --key 2^20 (again, A/B $run), a fresh process"
        written "$w/k20-ab" timeout 200 "$bin" prove --compiled "$w/c20.circ" --witness "$w/s20.wtns" \
          --key "$w/k20.key" --backend cuda --out "$w/k20-ab" 2>&1 | tail -3
      done
    done
  fi
  # Kernels loaded as the module loads (beside the key's read) rather than at their first launch.
  echo "== [$SECONDS] g16 prove --key 2^20 (again), CUDA_MODULE_LOADING=EAGER, a fresh process"
  CUDA_MODULE_LOADING=EAGER timed timeout 200 "$D/g16" prove --compiled "$w/c20.circ" --witness "$w/s20.wtns" \
    --key "$w/k20.key" --backend cuda --out "$w/k20-eager" 2>&1 | tail -3
  [ -n "${KEYS_NO_STORE:-}" ] || key_store 22 3 400 200
  # At 2^24 the key is made on the device once (about a minute).
  [ -n "${KEYS_24:-}" ] && key_store 24 1 500 300
  [ -n "${KEYS_SERVE:-}" ] && register
}

# A 2^22 zkey registered with `g16 serve`, then its first proof (`client load`), first and again
# (digest known); once with the key prepared as it is registered (the default), once with
# --prepare-on-first-job, each in a server of its own. The servers' logs give registration's
# phases.
register() {
  local w="$ROOT/.keys-work"
  mkdir -p "$w/cache"
  # The kernels compiled here (prepare), so the servers start without compiling them.
  cp -rn "$D/cache/." "$w/cache/" 2>/dev/null
  export G16_CACHE_DIR="$w/cache"
  [ -f "$w/s22.zkey" ] || step 300 keys-zkey-22 "$D/g16" setup --circuit synthetic --size 22 --seed 1 --zkey "$w/s22.zkey"
  [ -f "$w/s22.wtns" ] || "$D/g16" witness --circuit synthetic --size 22 --out "$w/s22.wtns" >/dev/null
  local addr=127.0.0.1:7326 mode
  for mode in on-register on-first-job; do
    local flags=()
    [ "$mode" = on-first-job ] && flags=(--prepare-on-first-job)
    "$D/g16" serve --devices cuda:0 --listen "$addr" --package-dir "$w" "${flags[@]}" >"$OUT/keys-serve-$mode.log" 2>&1 &
    local server=$! waited=0
    until grep -q "listening on" "$OUT/keys-serve-$mode.log" || [ $waited -ge 600 ]; do sleep 0.2; waited=$((waited + 1)); done
    local c=("$D/g16" client --server "http://$addr")
    for run in first again; do
      echo "== [$SECONDS] key prepared $mode: register a 2^22 zkey ($run), then its first proof"
      timed "${c[@]}" register --name s22 --zkey "$w/s22.zkey"
      timed "${c[@]}" load --circuit s22 --witness "$w/s22.wtns" --jobs 1 --clients 1 | tail -2
    done
    # The same file read by the server from its own disk (--on-server), under a new name: every
    # point checked again.
    echo "== [$SECONDS] key prepared $mode: register the 2^22 zkey by path on the server, then its first proof"
    timed "${c[@]}" register --on-server --name s22-path --zkey s22.zkey
    timed "${c[@]}" load --circuit s22-path --witness "$w/s22.wtns" --jobs 1 --clients 1 | tail -2
    kill -TERM "$server"
    wait "$server"
    grep "g16 serve:" "$OUT/keys-serve-$mode.log"
  done
}

scale() {
  local json="$OUT/scale.jsonl"
  for backend in ${BACKENDS:-cuda wgpu}; do
    for size in $(seq "${FROM:-16}" "${TO:-24}"); do
      local runs=5 keys=--keys-in-memory
      [ "$size" -ge 25 ] && runs=3
      # From 2^27 the host cannot hold the key (~83 GB of points beside the circuit): it is made
      # straight into the device's resident bases, a query at a time.
      [ "$size" -ge 27 ] && keys=--keys-on-device
      echo "== [$SECONDS] $backend prove-assignment 2^$size (key made on the device: $keys)"
      timed timeout "${LIMIT:-300}" "$D/g16" bench --json "$json" --backends "$backend" \
        --ops prove-assignment --sizes "$size" --runs "$runs" "$keys" ${MOSTLY_BITS:+--mostly-bits} 2>&1 |
        grep -v "^\s*$"
    done
  done
}

# A sector's C1 JSON and its ids (OUT.meta.json beside it) for `g16 filecoin c2`.
sector_ids() {
  python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["prover_id"], m["sector_id"])' "$1"
}

filecoin() {
  local json="$OUT/filecoin.jsonl" work=/tmp/filecoin
  export FIL_PROOFS_PARAMETER_CACHE="$work/params"
  mkdir -p "$FIL_PROOFS_PARAMETER_CACHE"
  for sector in ${SECTORS:-2KiB}; do
    local dir="$work/$sector" ids
    step "${LIMIT:-600}" "fil-params-$sector" "$D/fil-harness" --json "$json" params --sector "$sector"
    # A sector sealed by an earlier call on this machine is kept (sealing 512 MiB takes minutes).
    [ -s "$dir/c1.json" ] ||
      step 900 "fil-seal-$sector" "$D/fil-harness" --json "$json" seal --sector "$sector" --work "$dir" --c1 "$dir/c1.json"
    read -r -a ids <<<"$(sector_ids "$dir/c1.meta.json")"
    # Each process proves the sector 1 + RUNS times (the jobs after the first find the key
    # resident, as supraseal's timed runs after its warm-up do); wgpu twice.
    for run in cuda-fresh cuda-again wgpu; do
      local runs=$((${RUNS:-2} + 1)); [ "$run" = wgpu ] && runs=2
      step 600 "fil-g16-$run-$sector" "$D/g16" filecoin c2 --backend "${run%%-*}" --c1 "$dir/c1.json" \
        --params "$FIL_PROOFS_PARAMETER_CACHE" --out "$dir/g16-$run.proof" --runs "$runs" \
        --prover-id "${ids[0]}" --sector-id "${ids[1]}" --json "$json"
      cat "$OUT/fil-g16-$run-$sector.txt" | tail -3
    done
    step 600 "fil-bellperson-$sector" "$D/fil-harness" --json "$json" c2 --c1 "$dir/c1.json" --out "$dir/bellperson.proof" --runs "${RUNS:-2}"
    [ -x "$D/fil-harness-supraseal" ] &&
      step 600 "fil-supraseal-$sector" "$D/fil-harness-supraseal" --json "$json" c2 --c1 "$dir/c1.json" \
        --out "$dir/supraseal.proof" --runs "${RUNS:-2}" --warmup 1
  done
  if [ "${BIT_EXACT:-0}" = 1 ]; then
    test_kernels
    G16_REQUIRE_CUDA=1 G16_REQUIRE_WGPU=1 step 900 fil-bit-exact "$D/filecoin_c2" --ignored --test-threads=1
  fi
}

# The wgpu NTT's slow mode, its memory traffic alone (backend-wgpu/examples/strided_copy.rs):
# copies in the NTT pass's tiles at each stride, each size in a buffer an array and in one
# allocation, in two fresh processes each (the mode has been seen to change between processes).
strides() {
  local json="$OUT/strides.jsonl"
  export G16_COMMIT="$(cat "$D/commit" 2>/dev/null)" G16_DATE="$(date -u +%F)"
  for call in 1 2; do
    for layout in "" --one-allocation; do
      for access in "" --words; do
        echo "== [$SECONDS] strided copies 2^${FROM:-20}..2^${TO:-24} ${layout:-(a buffer an array)} ${access:-(16-byte words)}, process $call"
        timeout 120 "$D/strided_copy" --sizes "${FROM:-20}..${TO:-24}" --runs 9 $layout $access >>"$json" \
          2>"$OUT/strides.log" || tail -3 "$OUT/strides.log"
      done
    done
  done
  python3 - "$json" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for r in rows:
    one = "one" if "one allocation" in r["includes"] else "separate"
    print(f'{one:9} 2^{r["size"]:<3} {r["op"]:<24} {r["median_ms"]:9.3f} ms {r["gb_per_s"]:8.1f} GB/s')
PY
}

anchors() {
  local bin="$D/anchors/sppark/bin" json="$OUT/anchors.jsonl" sizes="${SIZES:-20 22 24}"
  local from="${NTT_FROM:-20}" to="${NTT_TO:-24}"
  if [ ! -x "$bin/sppark-msm-bench" ] || [ ! -x "$bin/sppark-ntt-bench" ]; then
    echo "no sppark anchor in $bin (benches/anchors/sppark/README.md says how to build it)"
    return 1
  fi
  echo "== [$SECONDS] sppark MSM G1 ($sizes), NTT 2^$from..2^$to"
  timeout 400 "$bin/sppark-msm-bench" --sizes "$(echo $sizes | tr ' ' ,)" --modes resident-points --runs 7 \
    --warmup 2 --check 16 >"$OUT/sppark-msm.jsonl" 2>"$OUT/sppark-msm.log" || tail -5 "$OUT/sppark-msm.log"
  timeout 200 "$bin/sppark-ntt-bench" "$from" "$to" 15 >"$OUT/sppark-ntt.jsonl" 2>&1 || tail -5 "$OUT/sppark-ntt.jsonl"
  for size in $sizes; do
    echo "== [$SECONDS] g16 MSM G1 2^$size, scalars from the host and on the device"
    timeout 200 "$D/g16" bench --backends cuda --ops msm-g1-host,msm-g1 --sizes "$size" --runs 7 --warmup 2 \
      --json "$json" 2>&1 | grep -v "^\s*$" | tail -n +2
  done
  echo "== [$SECONDS] g16 NTT 2^$from..2^$to"
  timeout 200 "$D/g16" bench --backends cuda --ops ntt --sizes "$from..$to" --runs 15 --warmup 2 --json "$json" 2>&1 |
    grep -v "^\s*$" | tail -n +2
  # The same with the inter-pass twiddles from split tables (CudaOptions::ntt_twiddles), into a
  # file of its own: the bench lines do not name the setting.
  echo "== [$SECONDS] g16 NTT 2^$from..2^$to, split twiddle tables"
  G16_CUDA_NTT_TWIDDLES=split timeout 200 "$D/g16" bench --backends cuda --ops ntt --sizes "$from..$to" --runs 15 \
    --warmup 2 --json "$OUT/anchors-ntt-split-twiddles.jsonl" 2>&1 | grep -v "^\s*$" | tail -n +2
  # And in blocks of 512 elements (CudaOptions::ntt_block), into a file of its own likewise.
  echo "== [$SECONDS] g16 NTT 2^$from..2^$to, blocks of 512"
  G16_CUDA_NTT_BLOCK=512 timeout 200 "$D/g16" bench --backends cuda --ops ntt --sizes "$from..$to" --runs 15 \
    --warmup 2 --json "$OUT/anchors-ntt-512.jsonl" 2>&1 | grep -v "^\s*$" | tail -n +2
  python3 "$ROOT/benches/anchors/sppark/to_bench.py" "$OUT/sppark-msm.jsonl" "$OUT/sppark-ntt.jsonl" \
    --driver "$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)" >>"$json"
  python3 "$ROOT/benches/anchors/sppark/to_bench.py" --table "$json"
}

ab() {
  local json="$OUT/ab.jsonl" variants v
  IFS=';' read -r -a variants <<<"${VARIANTS:?VARIANTS: the settings of each variant, ';' between variants}"
  for round in $(seq "${ROUNDS:-2}"); do
    for v in "${variants[@]}"; do
      echo "== [$SECONDS] round $round: ${v:-the defaults}"
      # shellcheck disable=SC2086 # a variant and BENCH_ARGS are lists of words
      env $v timeout "${LIMIT:-200}" "$D/g16" bench --backends cuda --ops "${OPS:-msm-g1}" --sizes "${SIZES:-22..24}" \
        --runs "${RUNS:-5}" --warmup 1 --json "$json" ${BENCH_ARGS:-} 2>&1 | grep "device ms"
    done
  done
  python3 - "$json" <<'PY'
import collections, json, statistics, sys
# Per (op, size): each variant's medians over the rounds, its median of them against the first
# variant's (the first in the file), and its phases' medians.
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    m = json.loads(line)
    rows[(m["op"], m["size"])][json.dumps(m.get("settings", {}), sort_keys=True)].append(m)
for (op, size), variants in sorted(rows.items()):
    base = None
    for settings, ms in variants.items():
        med = statistics.median(m["median_ms"] for m in ms)
        base = base or med
        names = sorted({k for m in ms for k in m.get("phases_ms", {})})
        phases = {k: round(statistics.median(m.get("phases_ms", {}).get(k, 0) for m in ms), 2) for k in names}
        runs = ", ".join(f"{m['median_ms']:.2f}" for m in ms)
        print(f"{op} 2^{size} {settings}: {med:.2f} ms ({med / base:.3f}× the first; rounds {runs}) {phases}")
PY
}

case "${1:-}" in
  prepare) shift; prepare "$@" ;;
  env | suite | front | bench | prove | engine | compiled | serve | circom | ntt_stability | pcie | witness | first | keygen | keys | register | scale | filecoin | anchors | strides | ab | tests)
    env_stage
    for s in "$@"; do
      [ "$s" = env ] && continue
      "$s"
    done
    ;;
  *) sed -n "2,/^# Each step/p" "${BASH_SOURCE[0]}"; exit 2 ;;
esac
