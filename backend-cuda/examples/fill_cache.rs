//! Compiles every kernel program for the architectures given (default sm_90) into the kernel
//! cache (`G16_CACHE_DIR`), so a machine that starts bare (the GPU machine) skips NVRTC:
//! `G16_CACHE_DIR=dir cargo run -p g16-cuda --example fill_cache -- sm_90`.
use g16_cuda::compile::{cache_path, compile_cached, nvrtc_version};
use g16_cuda::kernels::programs;

fn main() -> Result<(), g16_cuda::CudaError> {
    let archs: Vec<String> = std::env::args().skip(1).collect();
    let archs = if archs.is_empty() { vec!["sm_90".to_string()] } else { archs };
    let version = nvrtc_version()?;
    for arch in &archs {
        for program in programs() {
            compile_cached(&program, arch)?;
            println!("{}", cache_path(&program, arch, version).map(|p| p.display().to_string()).unwrap_or_default());
        }
    }
    Ok(())
}
