# Build environment for `cargo build --features supraseal` without a GPU or system CUDA.
T="${CUDA_WHEELS:?}/toolkit"
export PATH=$T/bin:$PATH                      # nvcc wrapper (forces sm_90) first
export NVCC=nvcc                              # sppark's build.rs probes for it
export CUDA_PATH=$T CUDA_HOME=$T
export CUDA_LIBRARY_PATH=$T                   # cuda-driver-sys: finds targets/x86_64-linux/lib{,/stubs} (stub libcuda.so)
export EC_GPU_CUDA_NVCC_ARGS="--fatbin --gpu-architecture=sm_90 --generate-code=arch=compute_90,code=sm_90"
export CXXSTDLIB=                              # cc: don't add -lstdc++ (linked statically below)
export RUSTFLAGS="-L native=$T/targets/x86_64-linux/lib -C link-arg=-Wl,-z,lazy -C link-arg=-Wl,-Bstatic -C link-arg=-lstdc++ -C link-arg=-Wl,-Bdynamic"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/supraseal"
