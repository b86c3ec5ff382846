//! Compiles every module on the first usable adapter and prints how long each took.
//! `MESA_SHADER_CACHE_DISABLE=true cargo run -p g16-wgpu --example pipelines` measures a cold start;
//! `--u32` forces the 32-bit path, `G16_WGPU_FORMULAS=plain|interpreted` the formula path,
//! `G16_WGPU_FQ2_LAZY=1` the lazy Fq2 product, `--parallel` all modules at once. Names of modules
//! as arguments: only those.
use g16_wgpu::{shader::Module, Options, WgpuDevice};

fn main() {
    let force_u32 = std::env::args().any(|a| a == "--u32");
    let only: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let dev = match WgpuDevice::open(&Options { force_u32, ..Default::default() }) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    println!("adapter: {} ({:?} path, {} formulas)", dev.adapter(), dev.arith(), dev.formulas().name());
    // `--parallel`: every module at once, as `prepare_all_pipelines` builds them; the wall
    // time is what a process waits for all of them.
    if std::env::args().any(|a| a == "--parallel") {
        match dev.prepare_all_pipelines() {
            Ok(ms) => {
                for (name, t) in dev.pipeline_times() {
                    println!("{name:<16} {t:>9.1} ms (in parallel)");
                }
                println!("{:<16} {ms:>9.1} ms wall, all modules in parallel", "all");
            }
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        }
        return;
    }
    let mut total = 0.0;
    for m in Module::ALL {
        if !only.is_empty() && !only.contains(&m.name()) {
            continue;
        }
        let t = std::time::Instant::now();
        if let Err(e) = dev.prepare_module(m) {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
        let ms = t.elapsed().as_secs_f64() * 1e3;
        total += ms;
        println!("{:<16} {ms:>9.1} ms", m.name());
    }
    println!("{:<16} {total:>9.1} ms, one module after another", "all");
}
