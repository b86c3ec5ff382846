//! Compiles every module on the first usable adapter and prints how long each took: the cold
//! start a first proof pays. No pipeline cache is used (`WgpuOptions::pipeline_cache` is
//! off); `MESA_SHADER_CACHE_DISABLE=true` (Mesa) or `__GL_SHADER_DISK_CACHE=0` (NVIDIA) also
//! turns off the driver's own cache.
//!
//! `cargo run -p g16-wgpu --example pipelines -- [--u32] [--parallel] [MODULE...]`: `--u32`
//! forces the 32-bit path, `--parallel` compiles all modules at once (as
//! `Pipelines::prepare_all` does), module names (`ntt`, `msm_bucket_g2`, …) select modules.

use g16_wgpu::compile::Module;
use g16_wgpu::{WgpuBackend, WgpuOptions};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let force_u32 = args.iter().any(|a| a == "--u32");
    let only: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let fail = |e: &dyn std::fmt::Display| -> ! {
        eprintln!("error: {e}");
        std::process::exit(1)
    };
    let backend = WgpuBackend::open(&WgpuOptions { force_u32, ..Default::default() }).unwrap_or_else(|e| fail(&e));
    let pipelines = backend.pipelines();
    println!("adapter: {} ({:?} path)", backend.device().adapter(), backend.device().arith());
    if args.iter().any(|a| a == "--parallel") {
        let ms = pipelines.prepare_all().unwrap_or_else(|e| fail(&e));
        for (name, t) in pipelines.times() {
            println!("{name:<16} {t:>9.1} ms (in parallel)");
        }
        println!("{:<16} {ms:>9.1} ms wall, all modules in parallel", "all");
        return;
    }
    let mut total = 0.0;
    for m in Module::ALL.iter().filter(|m| only.is_empty() || only.contains(&&m.name())) {
        let t = std::time::Instant::now();
        pipelines.prepare(*m).unwrap_or_else(|e| fail(&e));
        let ms = t.elapsed().as_secs_f64() * 1e3;
        total += ms;
        println!("{:<16} {ms:>9.1} ms", m.name());
    }
    println!("{:<16} {total:>9.1} ms, one module after another", "all");
}
