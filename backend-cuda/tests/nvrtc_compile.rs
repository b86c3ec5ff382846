//! Every kernel program compiles with NVRTC for the architectures g16 supports (A100 sm_80,
//! L4/Ada sm_89, H100/H200 sm_90), and each CUBIN defines every kernel the backend loads.
//! Needs NVRTC only, no GPU: this is the CUDA check CI runs. Without NVRTC it says so loudly
//! and passes, unless `G16_REQUIRE_NVRTC=1`, which makes that a failure.

use g16_cuda::compile::{
    compile, defines_symbol, is_elf, nvrtc_present, nvrtc_version, programs, unit, Part, Program, FP,
};

const ARCHS: [&str; 3] = ["sm_80", "sm_89", "sm_90"];

fn nvrtc_or_skip() -> bool {
    if nvrtc_present() {
        return true;
    }
    if std::env::var("G16_REQUIRE_NVRTC").as_deref() == Ok("1") {
        panic!("NVRTC required (G16_REQUIRE_NVRTC=1) but libnvrtc.so.13 was not found (LD_LIBRARY_PATH?)");
    }
    eprintln!("\n!!! SKIPPED: NVRTC not found (set G16_REQUIRE_NVRTC=1 to make this a failure)\n");
    false
}

#[test]
fn every_kernel_compiles_for_every_supported_architecture() {
    if !nvrtc_or_skip() {
        return;
    }
    let version = nvrtc_version().expect("NVRTC version");
    eprintln!("NVRTC {}.{}", version.0, version.1);
    // One thread per architecture: NVRTC compiles are independent and CI has two cores.
    let results: Vec<(String, Result<(), String>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = ARCHS
            .iter()
            .map(|&arch| {
                scope.spawn(move || {
                    let mut out = Vec::new();
                    for program in programs() {
                        let started = std::time::Instant::now();
                        let result = compile(&program, arch).map_err(|e| e.to_string()).and_then(|cubin| {
                            if !is_elf(&cubin) {
                                return Err("the output is not a CUBIN (ELF)".to_string());
                            }
                            match program.kernels.iter().map(|k| k.name()).find(|k| !defines_symbol(&cubin, k)) {
                                Some(missing) => Err(format!("kernel {missing} is missing from the CUBIN")),
                                None => Ok(()),
                            }
                        });
                        eprintln!("{} for {arch}: {:.1} s", program.name, started.elapsed().as_secs_f64());
                        out.push((format!("{} for {arch}", program.name), result));
                    }
                    out
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("compile thread")).collect()
    });
    let failures: Vec<String> =
        results.iter().filter_map(|(what, r)| r.as_ref().err().map(|e| format!("{what}: {e}"))).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert_eq!(results.len(), ARCHS.len() * programs().len());
}

#[test]
fn a_compile_error_carries_nvrtcs_log() {
    if !nvrtc_or_skip() {
        return;
    }
    let broken =
        Part { path: "util/broken.cu", text: "\nextern \"C\" __global__ void k() { undeclared_identifier = 1; }" };
    let bad = Program { name: "broken", source: unit(&[FP, broken]), kernels: Vec::new() };
    match compile(&bad, "sm_90") {
        Err(g16_cuda::CudaError::Compile { program, arch, log }) => {
            assert_eq!((program, arch.as_str()), ("broken", "sm_90"));
            assert!(log.contains("undeclared_identifier"), "the log names the problem: {log}");
            assert!(log.contains("kernels/util/broken.cu(2)"), "the log names the part and its line: {log}");
        }
        other => panic!("expected a compile error, got {:?}", other.map(|c| c.len())),
    }
}
