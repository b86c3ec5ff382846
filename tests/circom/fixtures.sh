#!/usr/bin/env bash
# Remakes fixtures/ from small.circom with circom2 and snarkjs (the versions .ci/run installs):
# the .r1cs, .wtns and .zkey of one small circuit over BLS12-381, the verification key, a
# proof and public signals snarkjs made, and the same circuit's files over bn128 (refused).
#   tests/circom/fixtures.sh [NPM_DIR]   (default: target/npm, where .ci/run installs the tools)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
npm_dir="$(cd "${1:-$here/../../target/npm}" && pwd)"
bin="$npm_dir/node_modules/.bin"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$here/small.circom" "$work/"
cd "$work"
echo '{"x": "5", "y": "11"}' > input.json
for curve in bls12381 bn128; do
  suffix=$([ "$curve" = bls12381 ] && echo "" || echo "_$curve")
  "$bin/circom2" small.circom --r1cs --wasm --prime "$curve" -o . >/dev/null
  "$bin/snarkjs" powersoftau new "$curve" 4 pot0.ptau >/dev/null
  "$bin/snarkjs" powersoftau contribute pot0.ptau pot1.ptau --name=fixture -e=fixture >/dev/null
  "$bin/snarkjs" powersoftau prepare phase2 pot1.ptau pot.ptau >/dev/null
  "$bin/snarkjs" groth16 setup small.r1cs pot.ptau small0.zkey >/dev/null
  "$bin/snarkjs" zkey contribute small0.zkey small.zkey --name=fixture -e=fixture >/dev/null
  "$bin/snarkjs" wtns calculate small_js/small.wasm input.json small.wtns >/dev/null
  cp small.r1cs "$here/fixtures/small$suffix.r1cs"
  cp small.wtns "$here/fixtures/small$suffix.wtns"
  cp small.zkey "$here/fixtures/small$suffix.zkey"
  if [ "$curve" = bls12381 ]; then
    "$bin/snarkjs" zkey export verificationkey small.zkey "$here/fixtures/small_vk.json" >/dev/null
    "$bin/snarkjs" groth16 prove small.zkey small.wtns "$here/fixtures/small_proof.json" "$here/fixtures/small_public.json"
  fi
  rm -rf small_js small.r1cs small.wtns small*.zkey pot*.ptau
done
ls -l "$here/fixtures"
