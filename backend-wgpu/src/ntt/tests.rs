//! The planner and the tables, on the host: the passes cover every stage, the dispatches tile
//! the array and fit the workgroup array, and the power tables give every power.

use super::*;

const SHADER: &str = include_str!("../../../shaders/ntt/ntt.wgsl");

/// Tiles of 4 to 1024 elements, with and without room for padding.
fn tiles() -> Vec<NttTile> {
    let mut tiles = Vec::new();
    for bytes in [128u32, 256, 1 << 10, 4 << 10, 16 << 10, 24 << 10, 48 << 10, 64 << 10] {
        tiles.push(NttTile::new(bytes, 256).unwrap());
    }
    tiles
}

#[test]
fn passes_cover_every_stage_in_the_fewest_balanced_passes() {
    for tile in tiles() {
        for log_n in 1..=31 {
            let passes = plan_passes(log_n, tile.log);
            assert_eq!(passes.iter().sum::<u32>(), log_n, "2^{log_n} on 2^{}", tile.log);
            let most = if log_n <= tile.log { tile.log } else { MAX_PASS_STAGES.min(tile.log - 1) };
            assert_eq!(passes.len() as u32, log_n.div_ceil(most), "2^{log_n} on 2^{}: {passes:?}", tile.log);
            let (max, min) = (passes.iter().max().unwrap(), passes.iter().min().unwrap());
            assert!(*max <= most && max - min <= 1, "2^{log_n} on 2^{}: {passes:?}", tile.log);
        }
    }
}

#[test]
fn plans_at_the_sizes_that_matter() {
    // A 1024-element tile (NVIDIA's 48 KiB), as the CUDA backend plans.
    assert_eq!(plan_passes(24, 10), vec![8, 8, 8]);
    assert_eq!(plan_passes(23, 10), vec![8, 8, 7]);
    assert_eq!(plan_passes(22, 10), vec![8, 7, 7]);
    assert_eq!(plan_passes(20, 10), vec![7, 7, 6]);
    assert_eq!(plan_passes(16, 10), vec![8, 8]);
    assert_eq!(plan_passes(11, 10), vec![6, 5]);
    assert_eq!(plan_passes(10, 10), vec![10]);
    // WebGPU's default 16 KiB: a tile of 512, still three passes at 2^24.
    assert_eq!(plan_passes(24, 9), vec![8, 8, 8]);
    assert_eq!(plan_passes(9, 9), vec![9]);
    assert_eq!(plan_passes(10, 9), vec![5, 5]);
    // A tile of 4: a stage a pass past it.
    assert_eq!(plan_passes(3, 2), vec![1, 1, 1]);
    // Passes held to fewer stages.
    assert_eq!(plan_passes_of_at_most(24, 10, 6), vec![6, 6, 6, 6]);
    assert_eq!(plan_passes_of_at_most(22, 10, 7), vec![6, 6, 5, 5]);
    assert_eq!(plan_passes_of_at_most(10, 10, 6), vec![10]);
    assert_eq!(plan_passes_of_at_most(5, 10, 0), vec![5]);
    assert_eq!(plan_passes_of_at_most(12, 10, 0), vec![1; 12]);
}

#[test]
fn launches_tile_the_array_and_fit_the_workgroup_array() {
    for tile in tiles() {
        for log_n in 1..=31 {
            let launches = plan_launches(log_n, tile, MAX_PASS_STAGES);
            let mut s0 = 0;
            for (i, l) in launches.iter().enumerate() {
                let what = format!("2^{log_n} on {tile:?}, pass {i}: {l:?}");
                assert_eq!(l.s0, s0, "{what}");
                let cols = 1u32 << l.log_cols;
                let elems = 1u64 << (l.k + l.log_cols);
                assert!(elems <= 1 << tile.log, "{what}");
                assert_eq!(u64::from(l.workgroups) * elems, 1 << log_n, "{what}");
                // Later passes take columns of one group: at most its 2^s0.
                assert!(l.log_cols <= if s0 == 0 { log_n - l.k } else { s0 }, "{what}");
                // The tile, padded or not, fits the workgroup array.
                assert!(l.stride == cols || (cols > 1 && l.stride == cols + 1), "{what}");
                assert!(u64::from(l.stride) << l.k <= u64::from(tile.shared), "{what}");
                // A tile as full as the pass allows: whole when the pass has columns to spare.
                let spare = if s0 == 0 { log_n } else { s0 + l.k };
                if spare >= tile.log {
                    assert_eq!(elems, 1 << tile.log, "{what}");
                }
                s0 += l.k;
            }
            assert_eq!(s0, log_n);
        }
    }
}

#[test]
fn padding_where_the_workgroup_array_has_room() {
    let nvidia = NttTile::new(48 << 10, 1024).unwrap();
    let launches = plan_launches(24, nvidia, MAX_PASS_STAGES);
    assert!(launches.iter().all(|l| l.log_cols == 2 && l.stride == 5 && l.workgroups == 1 << 14), "{launches:?}");
    let webgpu = NttTile::new(16 << 10, 256).unwrap();
    let launches = plan_launches(24, webgpu, MAX_PASS_STAGES);
    assert!(launches.iter().all(|l| l.log_cols == 1 && l.stride == 2 && l.workgroups == 1 << 15), "{launches:?}");
}

#[test]
fn constants_agree_with_the_shader() {
    assert!(SHADER.contains(&format!("const NTT_SPLIT: u32 = {SPLIT}u;")));
    // The uniform: the u32 fields of `Params`, then the constant's two vec4s.
    let params = &SHADER[SHADER.find("struct Params {").unwrap()..];
    let params = &params[..params.find('}').unwrap()];
    let scalars = params.matches(": u32,").count();
    // The vec4s start at a 16-byte boundary: no padding the host would have to write.
    assert_eq!(scalars % 4, 0, "Params has {scalars} u32 fields before its vec4s");
    let words = scalars + 8 * params.matches("array<vec4<u32>, 2>").count();
    let pass = PassLaunch { s0: 0, k: 1, log_cols: 0, stride: 1, workgroups: 1 };
    let (layout, _) = direction_table(1, false, 1);
    assert_eq!(pass_params(1, &pass, &layout, Scaling::None, Scaling::Constant(Fr::ONE)).len(), words);
}

#[test]
fn power_tables_give_every_power() {
    let base = Fr::from(5u64);
    let scale = Fr::from(3u64);
    for n in [1usize << 1, 1 << 12, 1 << 14] {
        let mut table = vec![Fr::from(7u64); 9];
        let t = PowerTable::append(&mut table, base, scale, n);
        let (lo_len, hi_len) = PowerTable::lens(n);
        assert_eq!(table.len(), 9 + lo_len + hi_len);
        for i in [0, 1, n / 2, n - 1, n.saturating_sub(1 << SPLIT)] {
            let got = split_power(&table, t, i);
            assert_eq!(got, scale * base.pow([i as u64]), "n = {n}, i = {i}");
        }
    }
}

/// Entry i of a power table, read as the kernel's `split_power` reads it.
fn split_power(table: &[Fr], t: PowerTable, i: usize) -> Fr {
    table[t.hi as usize + (i >> SPLIT)] * table[t.lo as usize + (i & ((1 << SPLIT) - 1))]
}

#[test]
fn direction_tables_hold_what_the_kernel_reads() {
    let mask = |n: usize| n - 1;
    for inverse in [false, true] {
        let inv = |x: Fr| if inverse { x.inverse().unwrap() } else { x };
        for (log, roots_log) in [(1, 1), (3, 3), (10, 10), (13, 7), (14, 8)] {
            let what = format!("2^{log}, inverse {inverse}, roots 2^{roots_log}");
            let (layout, t) = direction_table(log, inverse, roots_log);
            let n = 1usize << log;
            // The kernel's root(j, q) = ω_(2^(q+1))^(±j), for every stage a pass runs.
            for q in 0..roots_log {
                let w = inv(Fr::get_root_of_unity(2u64 << q).unwrap());
                for j in [0usize, (1 << q) / 2, (1 << q) - 1] {
                    assert_eq!(t[j << (roots_log - 1 - q)], w.pow([j as u64]), "{what}: root({j}, {q})");
                }
            }
            // The kernel's twiddle(e) = ω^(±e), e < n, from the half table.
            let omega = inv(Fr::get_root_of_unity(n as u64).unwrap());
            for e in [0, 1, n / 2 - 1, n / 2, n - 1, 4097 & mask(n), 5000 & mask(n)] {
                let at = layout.twiddles as usize;
                let got = if e < n / 2 { t[at + e] } else { -t[at + e - n / 2] };
                assert_eq!(got, omega.pow([e as u64]), "{what}: twiddle({e})");
            }
            // The scalings' power tables.
            let g = inv(Fr::GENERATOR);
            let n_inv = if inverse { Fr::from(n as u64).inverse().unwrap() } else { Fr::ONE };
            let omega_2n = Fr::get_root_of_unity(2 * n as u64).unwrap();
            for i in [0, 1, n - 1] {
                assert_eq!(split_power(&t, layout.coset, i), n_inv * g.pow([i as u64]), "{what}: coset {i}");
                let odd = if inverse { n_inv * g.pow([i as u64]) } else { omega_2n.pow([i as u64]) };
                assert_eq!(split_power(&t, layout.odd_coset, i), odd, "{what}: odd coset {i}");
            }
        }
    }
}
