//! A probe of the wgpu NTT's slow mode (docs/perf/wgpu.md, "The NTT's cliff"): the NTT pass's
//! memory traffic alone. Each workgroup copies one tile as a pass after the first reads and
//! writes it: 2^log_cols adjacent columns of 2^k rows, the rows 2^s0 elements apart (s0 = 0:
//! contiguous tiles), 32 bytes an element, every element of the array once. If large strides
//! at large sizes run at the slow mode's ~70 GB/s while contiguous tiles of the same arrays
//! run fast, the cost is in how the driver maps the allocation's pages (the span a tile
//! touches: 2^(s0 + k) elements), not in the NTT's arithmetic.
//!
//! The arrays are allocated as the backend allocates them (a storage buffer each, wgpu's
//! `MemoryHints::Performance`), or (`--one-allocation`) carved from one buffer made first, at
//! offsets of 2 MiB. Times are the host's around each submission, waited for (a copy of 2^24
//! elements moves 1 GB: ~3 ms at 380 GB/s, 15 ms at 70).
//!
//! An element moves as two 16-byte words, or (`--words`) as the NTT's generated accessors move
//! it (compile/bindings.rs): eight 4-byte loads into a register array, then eight 4-byte
//! stores, lane i of a warp 32 bytes from lane i + 1 at each.
//!
//! `cargo run --release -p g16-wgpu --example strided_copy -- [--sizes 20..24] [--runs 9]
//! [--one-allocation] [--words] [--check]`: one JSON line a (size, stride) in the bench's
//! schema (`op` names the stride and, with `--words`, the access; `G16_COMMIT` and the date as
//! the environment gives them); `--check` reads every copy back and compares it with its
//! source (CI-sized arrays on lavapipe).

use std::time::Instant;

const SHADER: &str = r#"
struct Params {
    log_n: u32,
    s0: u32,
    k: u32,
    log_cols: u32,
    // Workgroups along x: a grid of more than 65535 spreads over y.
    groups_x: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
// An element is 32 bytes: two vec4<u32>.
@group(0) @binding(1) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec4<u32>>;

// Tile `block` of the pass that starts after stage s0 (ntt.wgsl's later passes): group
// hi = block / (2^s0 / cols), columns lo0 .. lo0 + cols, rows 0 .. 2^k at stride 2^s0.
@compute @workgroup_size(256)
fn copy_tiles(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    let block = wg.x + wg.y * params.groups_x;
    let col_blocks = (1u << params.s0) >> params.log_cols;
    if (block >= (1u << params.log_n) >> (params.k + params.log_cols)) {
        return;
    }
    let hi = block / col_blocks;
    let lo0 = (block % col_blocks) << params.log_cols;
    let elems = 1u << (params.k + params.log_cols);
    let cols_mask = (1u << params.log_cols) - 1u;
    for (var e = t; e < elems; e += 256u) {
        let row = e >> params.log_cols;
        let m = e & cols_mask;
        let idx = (hi << (params.s0 + params.k)) + (row << params.s0) + lo0 + m;
        dst[2u * idx] = src[2u * idx];
        dst[2u * idx + 1u] = src[2u * idx + 1u];
    }
}
"#;

/// `SHADER` with 4-byte accesses: the arrays as words, an element copied as ntt.wgsl's
/// `src_load` and `dst_store` copy one.
fn words_shader() -> String {
    SHADER.replace("array<vec4<u32>>", "array<u32>").replace(
        "        dst[2u * idx] = src[2u * idx];\n        dst[2u * idx + 1u] = src[2u * idx + 1u];\n",
        "        var r: array<u32, 8>;\n        for (var w = 0u; w < 8u; w++) { r[w] = src[8u * idx + w]; }\n        \
         for (var w = 0u; w < 8u; w++) { dst[8u * idx + w] = r[w]; }\n",
    )
}

/// Rows a tile (`k`) and columns (`log_cols`) as the NTT's 1024-element tiles of 8-stage passes.
const K: u32 = 8;
const LOG_COLS: u32 = 2;
const MAX_GROUPS_X: u32 = 65_535;

struct Args {
    sizes: std::ops::RangeInclusive<u32>,
    runs: usize,
    one_allocation: bool,
    words: bool,
    check: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args { sizes: 20..=24, runs: 9, one_allocation: false, words: false, check: false };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--sizes" => {
                let v = it.next().ok_or("--sizes takes A..B")?;
                let (a, b) = v.split_once("..").ok_or("--sizes takes A..B")?;
                let parse = |s: &str| s.parse::<u32>().map_err(|e| format!("--sizes {v}: {e}"));
                args.sizes = parse(a)?..=parse(b)?;
            }
            "--runs" => {
                args.runs = it.next().ok_or("--runs takes a count")?.parse().map_err(|e| format!("--runs: {e}"))?
            }
            "--one-allocation" => args.one_allocation = true,
            "--words" => args.words = true,
            "--check" => args.check = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if args.sizes.is_empty() || *args.sizes.start() < K + LOG_COLS || *args.sizes.end() > 28 {
        return Err(format!("sizes must lie in {}..=28", K + LOG_COLS));
    }
    Ok(args)
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = wgpu::Backends::VULKAN | wgpu::Backends::METAL | wgpu::Backends::DX12;
    let instance = wgpu::Instance::new(desc);
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        ..Default::default()
    }))
    .map_err(|e| format!("no adapter: {e}"))?;
    let info = adapter.get_info();
    let limits = adapter.limits();
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("strided_copy"),
        required_limits: limits.clone(),
        memory_hints: wgpu::MemoryHints::Performance,
        ..Default::default()
    }))
    .map_err(|e| format!("request_device: {e}"))?;
    let binding = limits.max_storage_buffer_binding_size.min(limits.max_buffer_size);
    device.on_uncaptured_error(std::sync::Arc::new(|e: wgpu::Error| {
        eprintln!("error: {e}");
        std::process::exit(1)
    }));
    // wgpu refuses one buffer bound read-only and read-write in one dispatch, so the arrays
    // of one allocation are both bound read-write.
    let source = if args.words { words_shader() } else { SHADER.to_string() };
    assert!(!args.words || source.contains("r[w] = src"), "the 4-byte copy replaced the 16-byte one");
    let source = if args.one_allocation {
        source.replace("var<storage, read> src", "var<storage, read_write> src")
    } else {
        source
    };
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("strided_copy"),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("copy_tiles"),
        layout: None,
        module: &module,
        entry_point: Some("copy_tiles"),
        compilation_options: Default::default(),
        cache: None,
    });
    let commit = std::env::var("G16_COMMIT").unwrap_or_default();
    let date = std::env::var("G16_DATE").unwrap_or_default();
    let layout = if args.one_allocation { "one allocation, 2 MiB offsets" } else { "a buffer an array" };
    let (access, op_suffix) =
        if args.words { ("eight 4-byte words an element", "-words") } else { ("two 16-byte words an element", "") };
    eprintln!("adapter: {} ({:?}, {}), arrays: {layout}, {access}", info.name, info.backend, info.driver_info);
    const MIB2: u64 = 2 << 20;
    for log_n in args.sizes.clone() {
        let bytes = (1u64 << log_n) * 32;
        if bytes > binding {
            eprintln!("2^{log_n}: {bytes} bytes exceed the binding limit of {binding}; skipped");
            continue;
        }
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        let make = |label: &str, size: u64| {
            device.create_buffer(&wgpu::BufferDescriptor { label: Some(label), size, usage, mapped_at_creation: false })
        };
        // (buffer, offset) of the source and the destination.
        let (one, separate);
        let (src, dst): ((&wgpu::Buffer, u64), (&wgpu::Buffer, u64)) = if args.one_allocation {
            let second = bytes.div_ceil(MIB2) * MIB2;
            one = make("both arrays", second + bytes);
            ((&one, 0), (&one, second))
        } else {
            separate = (make("src", bytes), make("dst", bytes));
            ((&separate.0, 0), (&separate.1, 0))
        };
        // Distinct words, so a check sees any element copied to the wrong place.
        let words: Vec<u32> = (0..bytes / 4).map(|i| (i as u32).wrapping_mul(2_654_435_761)).collect();
        queue.write_buffer(src.0, src.1, bytemuck::cast_slice(&words));
        let mut strides = vec![0u32];
        strides.extend((LOG_COLS..=log_n - K).step_by(4));
        if *strides.last().unwrap_or(&0) != log_n - K {
            strides.push(log_n - K);
        }
        for s0 in strides {
            // Contiguous tiles (s0 = 0) are one column of 1024 rows; the others, the NTT's 4 × 256.
            let (k, log_cols) = if s0 == 0 { (K + LOG_COLS, 0) } else { (K, LOG_COLS) };
            let blocks = 1u32 << (log_n - k - log_cols);
            let groups_x = blocks.min(MAX_GROUPS_X);
            let params: [u32; 8] = [log_n, s0, k, log_cols, groups_x, 0, 0, 0];
            let uniform = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("params"),
                size: 32,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            queue.write_buffer(&uniform, 0, bytemuck::cast_slice(&params));
            let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &pipeline.get_bind_group_layout(0),
                entries: &[
                    wgpu::BindGroupEntry { binding: 0, resource: uniform.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 1, resource: range(src, bytes) },
                    wgpu::BindGroupEntry { binding: 2, resource: range(dst, bytes) },
                ],
            });
            // The destination cleared, so that the check sees every element written.
            let mut encoder = device.create_command_encoder(&Default::default());
            encoder.clear_buffer(dst.0, dst.1, Some(bytes));
            queue.submit([encoder.finish()]);
            let mut times = Vec::with_capacity(args.runs);
            for run in 0..args.runs + 1 {
                let mut encoder = device.create_command_encoder(&Default::default());
                {
                    let mut pass = encoder.begin_compute_pass(&Default::default());
                    pass.set_pipeline(&pipeline);
                    pass.set_bind_group(0, &group, &[]);
                    pass.dispatch_workgroups(groups_x, blocks.div_ceil(groups_x), 1);
                }
                let t = Instant::now();
                queue.submit([encoder.finish()]);
                device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| format!("poll: {e}"))?;
                // The first run warms the pipeline and the pages up; it is not counted.
                if run > 0 {
                    times.push(t.elapsed().as_secs_f64() * 1e3);
                }
            }
            if args.check {
                check(&device, &queue, dst, &words)?;
            }
            times.sort_by(f64::total_cmp);
            let median = times[times.len() / 2];
            let gbps = 2.0 * bytes as f64 / (median * 1e-3) / 1e9;
            println!(
                "{{\"backend\":\"wgpu\",\"device\":{:?},\"driver\":{:?},\"op\":\"strided-copy-s{s0}{op_suffix}\",\"size\":{log_n},\
                 \"median_ms\":{median:.4},\"runs\":{},\"gb_per_s\":{gbps:.1},\"commit\":{commit:?},\"date\":{date:?},\
                 \"includes\":\"one copy of 2^{log_n} 32-byte elements in the NTT pass's tiles ({} columns of {} rows \
                 2^{s0} elements apart), data on the device, host-timed around a waited submission; arrays: {layout}; {access}\"}}",
                info.name,
                info.driver_info,
                times.len(),
                1u32 << log_cols,
                1u32 << k
            );
        }
    }
    Ok(())
}

/// A storage binding of `bytes` at the array's offset.
fn range<'a>((buffer, offset): (&'a wgpu::Buffer, u64), bytes: u64) -> wgpu::BindingResource<'a> {
    wgpu::BindingResource::Buffer(wgpu::BufferBinding { buffer, offset, size: std::num::NonZeroU64::new(bytes) })
}

/// Reads the copy back and compares it with its source.
fn check(device: &wgpu::Device, queue: &wgpu::Queue, dst: (&wgpu::Buffer, u64), words: &[u32]) -> Result<(), String> {
    let bytes = words.len() as u64 * 4;
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(dst.0, dst.1, &readback, 0, bytes);
    queue.submit([encoder.finish()]);
    readback.slice(..).map_async(wgpu::MapMode::Read, |_| ());
    device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| format!("poll: {e}"))?;
    let view = readback.slice(..).get_mapped_range().map_err(|e| format!("mapping the copy: {e}"))?;
    let got = view.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    match got.zip(words).position(|(g, w)| g != *w) {
        None => Ok(()),
        Some(i) => Err(format!("the copy differs from its source at word {i}")),
    }
}
