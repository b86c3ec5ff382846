#!/usr/bin/env python3
# Compiles one kernel program (msm or ntt) with NVRTC exactly as backend-cuda does (same source
# concatenation, options and G16_CUDA_DEFINES), prints ptxas's registers / stack / spills per kernel
# and writes the CUBIN under the kernel cache's file name (compile.rs: cache_path), so a device run
# finds it. Usage: LD_LIBRARY_PATH=<nvrtc wheel lib> [G16_CUDA_DEFINES=...] prefill.py msm sm_90 <cache dir>
# (check the key with `fill_cache`: a hit takes seconds). Run from anywhere: the kernels are read
# from the repository this script lives in.
import ctypes, sys, os, json
lib = ctypes.CDLL("libnvrtc.so.13")
K = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kernels") + "/"
def rd(n): return open(K + n).read().replace("#pragma once", "")
def fnv(b):
    h = 0xcbf29ce484222325
    for x in b: h = ((h ^ x) * 0x100000001b3) & 0xffffffffffffffff
    return h
name, arch, cache = sys.argv[1], sys.argv[2], sys.argv[3]
defines = [d for d in os.environ.get("G16_CUDA_DEFINES", "").split() if d.startswith("-D")]
src = "\n".join([rd("ff.cuh"), rd("ec.cuh"), rd("msm.cu")] if name == "msm" else [rd("ff.cuh"), rd("ntt.cu")])
opts = [f"--gpu-architecture={arch}", "--std=c++17"] + defines
key = fnv((src + "\n" + json.dumps(opts, separators=(", ", ": "))).encode())
maj, mnr = ctypes.c_int(), ctypes.c_int(); lib.nvrtcVersion(ctypes.byref(maj), ctypes.byref(mnr))
path = f"{cache}/cuda/{name}-{arch}-nvrtc{maj.value}.{mnr.value}-{key:016x}.cubin"
prog = ctypes.c_void_p()
assert lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), f"{name}.cu".encode(), 0, None, None) == 0
allo = opts + ["-Xptxas=-v"]
arr = (ctypes.c_char_p * len(allo))(*[o.encode() for o in allo])
r = lib.nvrtcCompileProgram(prog, len(allo), arr)
n = ctypes.c_size_t(); lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
log = ctypes.create_string_buffer(n.value); lib.nvrtcGetProgramLog(prog, log)
log = log.value.decode()
if r != 0: print(log); sys.exit(1)
lib.nvrtcGetCUBINSize(prog, ctypes.byref(n))
buf = ctypes.create_string_buffer(n.value); lib.nvrtcGetCUBIN(prog, buf)
os.makedirs(os.path.dirname(path), exist_ok=True)
open(path, "wb").write(buf.raw)
open(path + ".log", "w").write(log)
cur = None
for line in log.splitlines():
    if "Function properties for" in line: cur = line.split()[-1]; cur = None if cur.startswith("_Z") else cur
    elif cur and ("stack frame" in line or "Used" in line): print(cur, line.split(":", 1)[-1].strip() if "Used" in line else line.strip())
print("wrote", path)
