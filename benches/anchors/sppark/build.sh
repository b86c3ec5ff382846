#!/bin/bash
# Builds blst (static, from source) and the sppark MSM benchmark driver.
# Laid out with its sources by sources.sh (benches/anchors/sppark/README.md); then, where nvcc
# runs (the GPU machine, or here with PyPI's CUDA wheels: NVCC and EXTRA_LDFLAGS=-L<their lib>,
# which holds libcudart_static.a and libcudadevrt.a):
#   bash build.sh  -> bin/sppark-msm-bench, bin/sppark-ntt-bench (cudart linked statically)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD="$HERE/build"
BIN="$HERE/bin"
mkdir -p "$BUILD" "$BIN"
CC=${CC:-cc}
NVCC=${NVCC:-nvcc}
ARCH=${ARCH:-sm_90}
SPPARK_COMMIT=$(cat "$HERE/src/sppark/COMMIT")

ADX=""
if grep -q -E '^flags.*\badx\b' /proc/cpuinfo 2>/dev/null; then
    ADX="-D__ADX__"      # same choice for libblst.a and for blst_t.hpp in the driver
fi
echo "build: ADX='${ADX}' arch=${ARCH} sppark=${SPPARK_COMMIT} blst=$(cat "$HERE/src/blst/COMMIT")" >&2
{ echo "nvcc: $($NVCC --version | tail -1)"; echo "gcc in PATH (nvcc host compiler): $(command -v gcc) $(gcc --version | head -1)"; } >&2

# 1. blst, as its build.sh does it: src/server.c + build/assembly.S -> libblst.a
(
    cd "$BUILD"
    set -x
    $CC -O2 -fno-builtin -fPIC -Wall -Wextra $ADX -c "$HERE/src/blst/src/server.c" -o server.o
    $CC -O2 -fno-builtin -fPIC $ADX -c "$HERE/src/blst/build/assembly.S" -o assembly.o
    rm -f libblst.a
    ar rc libblst.a server.o assembly.o
    ranlib libblst.a
)

# 2. host-side generator / CPU reference on blst's public API (plain C++, but
#    through nvcc so that it uses the same host compiler as the driver)
(set -x; $NVCC -O2 -std=c++17 -Xcompiler -O2 -I"$HERE/src/blst/bindings" -c "$HERE/driver/gen.cpp" -o "$BUILD/gen.o")

# 3. the driver: sppark headers (msm/pippenger.cuh, util/all_gpus.cpp), flags as
#    poc/msm-cuda/build.rs + sppark's rust/src/build.rs use them
(set -x; $NVCC -arch=$ARCH -O3 -std=c++17 \
    -DFEATURE_BLS12_381 $ADX -DTAKE_RESPONSIBILITY_FOR_ERROR_MESSAGE \
    -DSPPARK_COMMIT="\"$SPPARK_COMMIT\"" \
    -I"$HERE/src/sppark" -I"$HERE/src/blst/src" \
    -Xcompiler -Wno-unused-function -Xcompiler -O2 \
    -Xcompiler -static-libstdc++,-static-libgcc \
    "$HERE/driver/bench.cu" "$BUILD/gen.o" "$BUILD/libblst.a" \
    -o "$BIN/sppark-msm-bench" -lpthread ${EXTRA_LDFLAGS:-})
ls -la "$BIN/sppark-msm-bench" >&2

# 4. the NTT driver (device-resident, NN and NR orders)
(set -x; $NVCC -arch=$ARCH -O3 -std=c++17 -DFEATURE_BLS12_381 $ADX -DTAKE_RESPONSIBILITY_FOR_ERROR_MESSAGE \
    -I"$HERE/src/sppark" -I"$HERE/src/blst/src" -Xcompiler -Wno-unused-function \
    -Xcompiler -static-libstdc++,-static-libgcc "$HERE/driver/ntt.cu" -o "$BIN/sppark-ntt-bench" -lpthread ${EXTRA_LDFLAGS:-})
