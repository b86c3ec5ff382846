//! The kernels loaded on one device, and the one way to launch them: by [`Kernel`], with the
//! arguments checked against the kernel's parameters in the table (kernels.rs).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use cudarc::driver::sys::{CUfunction_attribute, CUlimit};
use cudarc::driver::{CudaFunction, CudaModule, CudaStream, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;

use super::{compile_cached, nvrtc_version, programs, Arg, Kernel};
use crate::device::CudaDevice;
use crate::error::{during, CudaError};

/// Every kernel of the table, loaded once when the device opens.
pub(crate) struct Kernels {
    dev: Arc<CudaDevice>,
    functions: HashMap<Kernel, CudaFunction>,
    _modules: Vec<Arc<CudaModule>>,
    /// NVRTC's version, (major, minor): what compiled them.
    nvrtc: (i32, i32),
}

impl Kernels {
    /// Compiles (or takes from the CUBIN cache in `cache_dir`) every program for the device's
    /// architecture and loads its kernels.
    pub(crate) fn load(dev: Arc<CudaDevice>, cache_dir: Option<&Path>) -> Result<Kernels, CudaError> {
        let nvrtc = nvrtc_version()?;
        let arch = dev.info().arch.clone();
        let mut modules = Vec::new();
        let mut functions = HashMap::new();
        for program in programs() {
            let cubin = compile_cached(&program, &arch, cache_dir)?;
            let module = dev
                .ctx()
                .load_module(Ptx::from_binary(cubin))
                .map_err(|e| CudaError::driver(format!("loading the {} kernels for {arch}", program.name), e))?;
            for &kernel in &program.kernels {
                let name = kernel.name();
                let f = module.load_function(name).map_err(|e| CudaError::driver(format!("kernel {name}"), e))?;
                functions.insert(kernel, f);
            }
            modules.push(module);
        }
        reserve_stack(&dev, &functions)?;
        Ok(Kernels { dev, functions, _modules: modules, nvrtc })
    }

    /// NVRTC's version, as the backend reports it.
    pub(crate) fn nvrtc_version(&self) -> String {
        format!("NVRTC {}.{}", self.nvrtc.0, self.nvrtc.1)
    }

    /// Launches `kernel` on the compute stream with `grid × block` threads, once `args` have
    /// matched its parameters; a mismatch is [`CudaError::Arguments`] and launches nothing.
    pub(crate) fn launch(&self, kernel: Kernel, grid: u32, block: u32, args: &[Arg]) -> Result<(), CudaError> {
        self.launch_on(self.dev.stream(), kernel, grid, block, args)
    }

    /// `launch` on `stream` (the background stream's work).
    pub(crate) fn launch_on(
        &self,
        stream: &CudaStream,
        kernel: Kernel,
        grid: u32,
        block: u32,
        args: &[Arg],
    ) -> Result<(), CudaError> {
        let name = kernel.name();
        kernel.check(args).map_err(|mismatch| CudaError::Arguments { kernel: name, mismatch })?;
        let f = self
            .functions
            .get(&kernel)
            .ok_or_else(|| CudaError::Driver { context: format!("kernel {name}"), message: "not loaded".into() })?;
        let mut builder = stream.launch_builder(f);
        for a in args {
            match a {
                Arg::U32(v) => builder.arg(v),
                Arg::Ptr(p) => builder.arg(p),
            };
        }
        let cfg = LaunchConfig { grid_dim: (grid.max(1), 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: the arguments match the kernel's C signature in count and kind (checked above
        // against the table, which the host test holds to the sources), and each caller passes
        // pointers into live allocations of the sizes the kernel indexes.
        unsafe { builder.launch(cfg) }.map_err(|e| CudaError::driver(format!("launching {name}"), e))?;
        Ok(())
    }
}

/// Sets the per-thread stack to what the hungriest kernel needs, while the device is idle. The
/// driver grows it at the first launch that needs more, and growing it waits for every kernel
/// in flight, on every stream: at 2^22 a key's warm-up proof had its first G2 accumulation wait
/// about 3 s for shifted bases being made in the background (docs/perf/cuda.md).
fn reserve_stack(dev: &CudaDevice, functions: &HashMap<Kernel, CudaFunction>) -> Result<(), CudaError> {
    let mut most = 0usize;
    for f in functions.values() {
        let local = f
            .get_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)
            .map_err(during("reading a kernel's local memory"))?;
        most = most.max(local.max(0) as usize);
    }
    let ctx = dev.ctx();
    let current = ctx.get_limit(CUlimit::CU_LIMIT_STACK_SIZE).map_err(during("reading the stack size"))?;
    if most > current {
        ctx.set_limit(CUlimit::CU_LIMIT_STACK_SIZE, most).map_err(during("setting the stack size"))?;
    }
    Ok(())
}
