//! NVRTC: the kernel programs, compiled for one GPU architecture into CUBIN, with an on-disk
//! cache keyed by the source's hash, the architecture and NVRTC's version (a new driver, a new
//! NVRTC or an edited kernel each miss the cache; nothing stale is ever loaded).
//!
//! The CUDA C sources (`kernels/`) are embedded, so a binary needs no files beside it. NVRTC
//! gets no include paths: each program is one translation unit, its parts concatenated in
//! dependency order.
//!
//! Every kernel the backend launches is in one table ([`Kernel`], kernels.rs) with its
//! parameters; the loaded kernels ([`Kernels`], launch.rs) launch only those, each launch's
//! arguments checked against the table.

use std::ffi::{c_char, c_int, CString};
use std::path::{Path, PathBuf};

use cudarc::nvrtc::{result, sys};

use crate::error::CudaError;

mod kernels;
mod launch;

pub(crate) use kernels::Arg;
pub use kernels::{Access, Curve, Elem, Kernel, Param, ParamKind};
pub(crate) use launch::Kernels;

/// One source file of `kernels/`: its path there and its text.
#[derive(Clone, Copy, Debug)]
pub struct Part {
    pub path: &'static str,
    pub text: &'static str,
}

macro_rules! part {
    ($path:literal) => {
        Part { path: $path, text: include_str!(concat!("../../../kernels/", $path)) }
    };
}

/// The Montgomery field template, Fr and Fq.
pub const FP: Part = part!("field/fp.cuh");
pub const FQ2: Part = part!("field/fq2.cuh");
/// Affine and XYZZ points over Fq (G1) and Fq2 (G2).
pub const XYZZ: Part = part!("curve/xyzz.cuh");
/// Twiddle tables and the NTT's pass kernel.
pub const NTT: Part = part!("ntt/ntt.cu");
pub const POINTWISE: Part = part!("ntt/pointwise.cu");
pub const SCAN: Part = part!("util/scan.cu");
/// The MSM's digits and counting sort.
pub const SORT: Part = part!("msm/sort.cu");
/// The MSM's bucket accumulation and reduction.
pub const BUCKET: Part = part!("msm/bucket.cu");
/// The accumulation in equal slices of the sorted entries (`MsmAccumulation::Chunks`).
pub const BALANCED: Part = part!("msm/balanced.cu");
/// Shifted bases for the MSM's shared bucket layout.
pub const TABLE: Part = part!("msm/table.cu");
/// Fixed-base scalar multiplication over a host-built table (key generation).
pub const FIXED_BASE: Part = part!("msm/fixed_base.cu");
/// A compiled circuit's sparse products (A·z, B·z, C·z) and its R1CS check.
pub const SPMV: Part = part!("r1cs/spmv.cu");
pub const CHECK: Part = part!("r1cs/check.cu");
/// Subgroup checks of points by Scott's endomorphism tests (a proving key's, as it loads).
pub const SUBGROUP: Part = part!("curve/subgroup.cu");

/// One NVRTC translation unit and the kernels the backend loads from it.
pub struct Program {
    pub name: &'static str,
    pub source: String,
    pub kernels: Vec<Kernel>,
}

impl Program {
    /// The program `name` of `parts`, with the kernels the table places in it.
    fn of(name: &'static str, parts: &[Part]) -> Program {
        let kernels = Kernel::ALL.into_iter().filter(|k| k.program() == name).collect();
        Program { name, source: unit(parts), kernels }
    }
}

/// The programs: NTT and pointwise over Fr; the sparse products and the R1CS check; MSM over
/// G1 and G2; fixed-base multiplication over G1 and G2 (its own program: key generation
/// needs none of the MSM's kernels, and a smaller unit compiles sooner); the subgroup checks
/// of G1 and G2 points (their own, likewise: loading a key needs them alone).
pub fn programs() -> Vec<Program> {
    vec![
        Program::of("ntt", &[FP, NTT, POINTWISE]),
        Program::of("r1cs", &[FP, SPMV, CHECK]),
        Program::of("msm", &[FP, FQ2, XYZZ, SCAN, SORT, BUCKET, BALANCED, TABLE]),
        Program::of("fixed_base", &[FP, FQ2, XYZZ, FIXED_BASE]),
        Program::of("subgroup", &[FP, FQ2, XYZZ, SUBGROUP]),
    ]
}

/// Parts concatenated into one translation unit, each behind a `#line` directive, so that a
/// compiler's messages name the part and its own line (the machine code is the same without).
pub fn unit(parts: &[Part]) -> String {
    let part = |p: &Part| format!("#line 1 \"kernels/{}\"\n{}", p.path, p.text.replace("#pragma once", ""));
    parts.iter().map(part).collect::<Vec<_>>().join("\n")
}

/// The field and curve headers alone, for the host-emulation arithmetic tests.
pub fn arithmetic_headers() -> String {
    unit(&[FP, FQ2, XYZZ])
}

/// Whether libnvrtc can be loaded. cudarc panics on first use of a missing library, so this is
/// asked before NVRTC is first used.
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the library under its candidate names; no NVRTC function runs.
    unsafe { sys::is_culib_present() }
}

pub(crate) fn require_nvrtc() -> Result<(), CudaError> {
    if nvrtc_present() {
        Ok(())
    } else {
        Err(CudaError::Unavailable(
            "NVRTC (libnvrtc.so.13) not found: install the CUDA toolkit or `pip install nvidia-cuda-nvrtc` \
             and put its lib directory on LD_LIBRARY_PATH"
                .to_string(),
        ))
    }
}

/// NVRTC's version, (major, minor).
pub fn nvrtc_version() -> Result<(i32, i32), CudaError> {
    require_nvrtc()?;
    let (mut major, mut minor): (c_int, c_int) = (0, 0);
    // SAFETY: the library is present (checked above); both pointers are valid for writes.
    let status = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
    status.result().map_err(|e| CudaError::Unavailable(format!("nvrtcVersion failed: {e:?}")))?;
    Ok((major, minor))
}

/// FNV-1a, 64 bit: a hash that is the same in every build, for cache keys.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// The options every program is compiled with (part of the cache key).
fn options(arch: &str) -> Vec<String> {
    vec![format!("--gpu-architecture={arch}"), "--std=c++17".to_string()]
}

/// Compiles `program` for `arch` (`sm_90`, …) to CUBIN; a compile error carries NVRTC's log.
pub fn compile(program: &Program, arch: &str) -> Result<Vec<u8>, CudaError> {
    require_nvrtc()?;
    let compile_error = |log: String| CudaError::Compile { program: program.name, arch: arch.into(), log };
    let source = CString::new(program.source.as_bytes()).map_err(|_| compile_error("NUL byte in source".into()))?;
    let name = CString::new(format!("{}.cu", program.name)).unwrap_or_default();
    let prog = result::create_program(&source, Some(&name))
        .map_err(|e| CudaError::Unavailable(format!("nvrtcCreateProgram failed: {e:?}")))?;
    let guard = ProgramGuard(prog);
    // SAFETY: `prog` was just created and is destroyed only by `guard`'s drop, after this use.
    let compiled = unsafe { result::compile_program(guard.0, &options(arch)) };
    if let Err(e) = compiled {
        // SAFETY: as above; the log exists once compilation was attempted.
        let log = unsafe { result::get_program_log(guard.0) }
            .map(|raw| c_chars_to_string(&raw))
            .unwrap_or_else(|_| "(no log)".to_string());
        return Err(compile_error(format!("{e:?}\n{log}")));
    }
    let mut size = 0usize;
    // SAFETY: the program compiled; `size` is valid for writes.
    unsafe { sys::nvrtcGetCUBINSize(guard.0, &mut size) }
        .result()
        .map_err(|e| compile_error(format!("no CUBIN: {e:?}")))?;
    let mut cubin = vec![0u8; size];
    // SAFETY: `cubin` holds exactly the `size` bytes NVRTC reported.
    unsafe { sys::nvrtcGetCUBIN(guard.0, cubin.as_mut_ptr() as *mut c_char) }
        .result()
        .map_err(|e| compile_error(format!("no CUBIN: {e:?}")))?;
    Ok(cubin)
}

struct ProgramGuard(sys::nvrtcProgram);

impl Drop for ProgramGuard {
    fn drop(&mut self) {
        // SAFETY: the program was created by create_program and is destroyed once, here.
        let _ = unsafe { result::destroy_program(self.0) };
    }
}

fn c_chars_to_string(raw: &[c_char]) -> String {
    // SAFETY: NVRTC's log is NUL-terminated within `raw` (its size includes the terminator).
    let bytes: Vec<u8> = raw.iter().map(|&c| c as u8).take_while(|&b| b != 0).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The cache file in `dir` for a program, architecture and NVRTC version.
pub fn cache_path(dir: &Path, program: &Program, arch: &str, nvrtc: (i32, i32)) -> PathBuf {
    let key = fnv1a(format!("{}\n{:?}", program.source, options(arch)).as_bytes());
    dir.join(format!("{}-{arch}-nvrtc{}.{}-{key:016x}.cubin", program.name, nvrtc.0, nvrtc.1))
}

/// The CUBIN of `program` for `arch`: from the cache in `cache_dir`, or compiled (and then
/// cached there; a cache that cannot be written only costs the next run a compile). Without a
/// directory every open compiles.
pub fn compile_cached(program: &Program, arch: &str, cache_dir: Option<&Path>) -> Result<Vec<u8>, CudaError> {
    let path = cache_dir.map(|dir| nvrtc_version().map(|v| cache_path(dir, program, arch, v))).transpose()?;
    if let Some(bytes) = path.as_ref().and_then(|p| std::fs::read(p).ok()).filter(|b| is_elf(b)) {
        return Ok(bytes);
    }
    let cubin = compile(program, arch)?;
    if let Some(path) = path {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::write(&tmp, &cubin).is_ok() {
            let _ = std::fs::rename(&tmp, &path);
        }
    }
    Ok(cubin)
}

/// A CUBIN is an ELF file.
pub fn is_elf(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x7fELF")
}

/// Whether the CUBIN defines a kernel of this name (its symbol table holds the name as a
/// NUL-terminated string).
pub fn defines_symbol(cubin: &[u8], name: &str) -> bool {
    let needle = CString::new(name).map(|c| c.into_bytes_with_nul()).unwrap_or_default();
    !needle.is_empty() && cubin.windows(needle.len()).any(|w| w == needle.as_slice())
}
