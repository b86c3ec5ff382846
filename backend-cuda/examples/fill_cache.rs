//! Compiles every kernel program into a CUBIN cache directory, for the architectures given
//! (default sm_90), so a machine that starts bare (a GPU machine) skips NVRTC when it opens a
//! device with `CudaOptions { cache_dir: Some(DIR), .. }`:
//! `cargo run -p g16-cuda --example fill_cache -- DIR sm_90`.
use std::path::PathBuf;

use g16_cuda::compile::{cache_path, compile_cached, nvrtc_version, programs};

fn main() -> Result<(), g16_cuda::CudaError> {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next().map(PathBuf::from) else {
        eprintln!("usage: fill_cache DIR [sm_XX ...]");
        std::process::exit(2);
    };
    let archs: Vec<String> = args.collect();
    let archs = if archs.is_empty() { vec!["sm_90".to_string()] } else { archs };
    let version = nvrtc_version()?;
    for arch in &archs {
        for program in programs() {
            compile_cached(&program, arch, Some(&dir))?;
            println!("{}", cache_path(&dir, &program, arch, version).display());
        }
    }
    Ok(())
}
