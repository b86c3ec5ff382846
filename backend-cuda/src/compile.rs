//! NVRTC: compiles the kernel programs for one GPU architecture into CUBIN, with an on-disk
//! cache keyed by the source's hash, the architecture and NVRTC's version (a new driver, a
//! new NVRTC or an edited kernel each miss the cache; nothing stale is ever loaded).

use std::ffi::{c_char, c_int, CString};
use std::path::PathBuf;

use cudarc::nvrtc::{result, sys};

use crate::error::CudaError;
use crate::kernels::Program;

/// Whether libnvrtc can be loaded. cudarc panics on first use of a missing library, so this is
/// asked before any NVRTC call.
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the library under its candidate names; no NVRTC call is made.
    unsafe { sys::is_culib_present() }
}

fn require_nvrtc() -> Result<(), CudaError> {
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

/// The options every program is compiled with, plus any `-D` definitions in `G16_CUDA_DEFINES`
/// (whitespace-separated; for kernel experiments such as `-DG16_G2_HOT_INLINE=1`). They are
/// part of the cache key, so each variant has its own cached CUBIN.
fn options(arch: &str) -> Vec<String> {
    let mut opts = vec![format!("--gpu-architecture={arch}"), "--std=c++17".to_string()];
    if let Ok(defines) = std::env::var("G16_CUDA_DEFINES") {
        opts.extend(defines.split_whitespace().filter(|d| d.starts_with("-D")).map(str::to_string));
    }
    opts
}

/// Compiles `program` for `arch` (`sm_90`, …) to CUBIN; a compile error carries NVRTC's log.
pub fn compile(program: &Program, arch: &str) -> Result<Vec<u8>, CudaError> {
    require_nvrtc()?;
    let source = CString::new(program.source.as_bytes()).map_err(|_| CudaError::Compile {
        program: program.name,
        arch: arch.into(),
        log: "NUL byte in source".into(),
    })?;
    let name = CString::new(format!("{}.cu", program.name)).unwrap_or_default();
    let prog = result::create_program(&source, Some(&name))
        .map_err(|e| CudaError::Unavailable(format!("nvrtcCreateProgram failed: {e:?}")))?;
    let guard = ProgramGuard(prog);
    // SAFETY: `prog` was just created and is destroyed only by `guard`'s drop, after these calls.
    let compiled = unsafe { result::compile_program(guard.0, &options(arch)) };
    if let Err(e) = compiled {
        // SAFETY: as above; the log exists once compilation was attempted.
        let log = unsafe { result::get_program_log(guard.0) }
            .map(|raw| c_chars_to_string(&raw))
            .unwrap_or_else(|_| "(no log)".to_string());
        return Err(CudaError::Compile { program: program.name, arch: arch.into(), log: format!("{e:?}\n{log}") });
    }
    let mut size = 0usize;
    // SAFETY: the program compiled; `size` is valid for writes.
    unsafe { sys::nvrtcGetCUBINSize(guard.0, &mut size) }.result().map_err(|e| CudaError::Compile {
        program: program.name,
        arch: arch.into(),
        log: format!("no CUBIN: {e:?}"),
    })?;
    let mut cubin = vec![0u8; size];
    // SAFETY: `cubin` holds exactly the `size` bytes NVRTC reported.
    unsafe { sys::nvrtcGetCUBIN(guard.0, cubin.as_mut_ptr() as *mut c_char) }.result().map_err(|e| {
        CudaError::Compile { program: program.name, arch: arch.into(), log: format!("no CUBIN: {e:?}") }
    })?;
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

/// Where compiled kernels are cached: `$G16_CACHE_DIR/cuda`, else `$XDG_CACHE_HOME/g16/cuda`,
/// else `~/.cache/g16/cuda` (the key cache's convention).
pub fn cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("G16_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("XDG_CACHE_HOME").map(|x| PathBuf::from(x).join("g16")))
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("g16")))?;
    Some(base.join("cuda"))
}

/// The cache file for a program, architecture and NVRTC version.
pub fn cache_path(program: &Program, arch: &str, nvrtc: (i32, i32)) -> Option<PathBuf> {
    let key = fnv1a(format!("{}\n{:?}", program.source, options(arch)).as_bytes());
    Some(cache_dir()?.join(format!("{}-{arch}-nvrtc{}.{}-{key:016x}.cubin", program.name, nvrtc.0, nvrtc.1)))
}

/// The CUBIN of `program` for `arch`, from the cache or compiled (and then cached; a cache that
/// cannot be written only costs the next run a compile).
pub fn compile_cached(program: &Program, arch: &str) -> Result<Vec<u8>, CudaError> {
    let path = cache_path(program, arch, nvrtc_version()?);
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
