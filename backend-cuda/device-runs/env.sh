# Sourced by the device runs: NVRTC from the machine's CUDA, the carried kernel cache.
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export G16_CACHE_DIR="$HERE/cache"
NVRTC_DIR="$(dirname "$(find / -name 'libnvrtc.so.13*' -not -path '*/proc/*' 2>/dev/null | grep -v builtins | head -1)")"
export LD_LIBRARY_PATH="$NVRTC_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$HERE:$PATH"
echo "NVRTC from $NVRTC_DIR"
