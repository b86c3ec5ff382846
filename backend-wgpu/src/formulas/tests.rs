//! The programs on the host: a model of shaders/vm/vm.wgsl over arkworks' Fq runs every
//! program on random points and values and compares with arkworks. (It checks the programs'
//! algebra; the WGSL field arithmetic under them is checked on a device, tests/device.rs and
//! the conformance suite.)

use super::builder::{Builder, FROM_PX, OP_ADD, OP_COPY, OP_MUL, OP_MUL_DIFF, OP_MUL_SUM, OP_SUB, P, Q, TO_PX};
use super::programs::{programs, Programs};
use super::table::{TABLE_INV, TABLE_NORM, TABLE_PREFIX, TABLE_PREV};
use crate::buffers::Curve;
use ark_bls12_381::{Fq, Fq2, Fr, G1Projective, G2Projective};
use ark_ec::{CurveGroup, PrimeGroup};
use ark_ff::{AdditiveGroup, BigInt, Field, PrimeField, UniformRand};

/// The interpreter, on the host: runs program `name` over `regs` (p = 0, q = 4w: P and Q at
/// their own slots).
fn run(p: &Programs, name: &str, regs: &mut [Fq]) {
    let &(_, start, end) = p.ranges.iter().find(|r| r.0 == name).unwrap();
    let mut px = Fq::ZERO;
    for (pc, &ins) in p.words[start as usize..end as usize].iter().enumerate() {
        let (op, d, a, b) = (ins & 0xff, (ins >> 8) & 0xff, (ins >> 16) & 0xff, ins >> 24);
        let (x, y) = (regs[a as usize], regs[b as usize]);
        let l = if op & FROM_PX != 0 { px } else { x };
        let z = match op & 0xf {
            OP_MUL => l * y,
            OP_ADD => l + y,
            OP_SUB => l - y,
            OP_MUL_SUM => px * (x + y),
            OP_MUL_DIFF => px * (x - y),
            OP_COPY => l,
            other => panic!("{name}[{pc}]: unknown kind {other}"),
        };
        if op & TO_PX != 0 {
            px = z;
        } else {
            regs[d as usize] = z;
        }
    }
}

/// XYZZ coordinates of an affine point (x, y) with a random Z.
fn xyzz<F: Field>(x: F, y: F, z: F) -> [F; 4] {
    let zz = z.square();
    let zzz = zz * z;
    [x * zz, y * zzz, zz, zzz]
}

fn put<F: Copy>(regs: &mut [Fq], w: usize, coord: usize, v: F, split: fn(F) -> [Fq; 2]) {
    let parts = split(v);
    regs[coord * w..(coord + 1) * w].copy_from_slice(&parts[..w]);
}

fn get<F>(regs: &[Fq], w: usize, coord: usize, join: fn([Fq; 2]) -> F) -> F {
    join([regs[coord * w], if w == 2 { regs[coord * w + 1] } else { Fq::ZERO }])
}

fn check<F: Field, G: CurveGroup<BaseField = F> + PrimeGroup<ScalarField = Fr>>(
    curve: Curve,
    split: fn(F) -> [Fq; 2],
    join: fn([Fq; 2]) -> F,
    affine_xy: fn(&G::Affine) -> (F, F),
) {
    let mut rng = ark_std::test_rng();
    let p = programs(curve);
    let w = p.w as usize;
    for _ in 0..4 {
        let a = (G::generator() * Fr::rand(&mut rng)).into_affine();
        let b = (G::generator() * Fr::rand(&mut rng)).into_affine();
        let (ax, ay) = affine_xy(&a);
        let (bx, by) = affine_xy(&b);
        let coords = |regs: &[Fq]| -> (F, F) {
            let c: Vec<F> = (0..4).map(|k| get(regs, w, k, join)).collect();
            (c[0] / c[2], c[1] / c[3])
        };
        let mut regs = vec![Fq::ZERO; p.registers as usize];
        // P + Q, both XYZZ.
        for (k, v) in xyzz(ax, ay, F::rand(&mut rng)).into_iter().enumerate() {
            put(&mut regs, w, k, v, split);
        }
        for (k, v) in xyzz(bx, by, F::rand(&mut rng)).into_iter().enumerate() {
            put(&mut regs, w, 4 + k, v, split);
        }
        let saved = regs.clone();
        run(&p, "ADD_HEAD", &mut regs);
        run(&p, "ADD_TAIL", &mut regs);
        assert_eq!(coords(&regs), affine_xy(&(a + b).into_affine()), "{curve:?} add");
        // P + affine Q.
        let mut regs = saved.clone();
        put(&mut regs, w, 4, bx, split);
        put(&mut regs, w, 5, by, split);
        run(&p, "MADD_HEAD", &mut regs);
        run(&p, "MADD_TAIL", &mut regs);
        assert_eq!(coords(&regs), affine_xy(&(a + b).into_affine()), "{curve:?} madd");
        // 2·affine Q, and 2·P.
        let mut regs = saved.clone();
        put(&mut regs, w, 4, bx, split);
        put(&mut regs, w, 5, by, split);
        run(&p, "MDBL", &mut regs);
        assert_eq!(coords(&regs), affine_xy(&(b + b).into_affine()), "{curve:?} mdbl");
        let mut regs = saved;
        run(&p, "DBL", &mut regs);
        assert_eq!(coords(&regs), affine_xy(&(a + a).into_affine()), "{curve:?} dbl");
    }
}

/// The shifted-bases kernel's programs (shaders/msm/table.wgsl) on random field values: the
/// forward product, the norm the kernel inverts, the inverse from it, and the backward step's
/// affine coordinates and running inverse.
fn check_table<F: Field>(curve: Curve, split: fn(F) -> [Fq; 2], join: fn([Fq; 2]) -> F) {
    let mut rng = ark_std::test_rng();
    let p = programs(curve);
    let w = p.w as usize;
    let slot = |s: u16| s as usize;
    for _ in 0..4 {
        let mut regs = vec![Fq::ZERO; p.registers as usize];
        let (zz, zzz, prefix) = (F::rand(&mut rng), F::rand(&mut rng), F::rand(&mut rng));
        put(&mut regs, w, 2, zz, split);
        put(&mut regs, w, 3, zzz, split);
        put(&mut regs, w, slot(TABLE_PREFIX), prefix, split);
        run(&p, "TABLE_FWD", &mut regs);
        let prefix = prefix * zz * zzz;
        assert_eq!(get(&regs, w, slot(TABLE_PREFIX), join), prefix, "{curve:?} TABLE_FWD");
        run(&p, "TABLE_NORM", &mut regs);
        // What the kernel does between the two: invert NORM's first register, zero its second.
        let n = regs[slot(TABLE_NORM) * w];
        regs[slot(TABLE_NORM) * w] = n.inverse().unwrap();
        if w == 2 {
            regs[slot(TABLE_NORM) * w + 1] = Fq::ZERO;
        }
        run(&p, "TABLE_INV", &mut regs);
        assert_eq!(get(&regs, w, slot(TABLE_INV), join), prefix.inverse().unwrap(), "{curve:?} TABLE_INV");

        let q: Vec<F> = (0..4).map(|_| F::rand(&mut rng)).collect();
        let (inv, prev) = (F::rand(&mut rng), F::rand(&mut rng));
        for (k, v) in q.iter().enumerate() {
            put(&mut regs, w, 4 + k, *v, split);
        }
        put(&mut regs, w, slot(TABLE_INV), inv, split);
        put(&mut regs, w, slot(TABLE_PREV), prev, split);
        run(&p, "TABLE_BWD", &mut regs);
        let dinv = inv * prev;
        assert_eq!(get(&regs, w, 4, join), q[0] * dinv * q[3], "{curve:?} TABLE_BWD x");
        assert_eq!(get(&regs, w, 5, join), q[1] * dinv * q[2], "{curve:?} TABLE_BWD y");
        assert_eq!(get(&regs, w, slot(TABLE_INV), join), inv * q[2] * q[3], "{curve:?} TABLE_BWD inv");
    }
}

#[test]
fn programs_compute_the_group_law() {
    check::<Fq, G1Projective>(Curve::G1, |x| [x, Fq::ZERO], |v| v[0], |p| (p.x, p.y));
    check::<Fq2, G2Projective>(Curve::G2, |x| [x.c0, x.c1], |v| Fq2::new(v[0], v[1]), |p| (p.x, p.y));
}

#[test]
fn table_programs_invert_and_normalise() {
    check_table::<Fq>(Curve::G1, |x| [x, Fq::ZERO], |v| v[0]);
    check_table::<Fq2>(Curve::G2, |x| [x.c0, x.c1], |v| Fq2::new(v[0], v[1]));
}

/// One Fq2 product and one square as the interpreter runs them (through px), on operands
/// whose coordinates are zero, one, −1, 2, the elements whose Montgomery limbs are 1 and
/// p − 1, and random values, against arkworks; the product's operands in P's and Q's slots,
/// so both the fixed-slot and the temporary operand orders occur.
#[test]
fn fq2_products_on_edge_operands() {
    let mut rng = ark_std::test_rng();
    let mut p_minus_1 = Fq::MODULUS;
    p_minus_1.0[0] -= 1;
    let values = [
        Fq::ZERO,
        Fq::new_unchecked(BigInt::new([1, 0, 0, 0, 0, 0])),
        Fq::ONE,
        Fq::new_unchecked(p_minus_1),
        -Fq::ONE,
        Fq::from(2u64),
        Fq::rand(&mut rng),
        Fq::rand(&mut rng),
    ];
    let operands: Vec<Fq2> = values.iter().flat_map(|&c0| values.iter().map(move |&c1| Fq2::new(c0, c1))).collect();
    let mut b = Builder::new(2);
    let (x, y) = (b.fixed(P), b.fixed(Q));
    let c = b.mul(x, y);
    let s = b.sqr(x);
    b.store(&[(P + 1, c), (P + 2, s)]);
    b.fold_stores();
    let (words, high) = b.allocate();
    let len = words.len() as u32;
    let p = Programs { words, ranges: vec![("TEST", 0, len)], registers: high, w: 2 };
    let mut regs = vec![Fq::ZERO; p.registers as usize];
    for &u in &operands {
        for &v in &operands {
            regs[..2].copy_from_slice(&[u.c0, u.c1]);
            regs[8..10].copy_from_slice(&[v.c0, v.c1]);
            run(&p, "TEST", &mut regs);
            assert_eq!(Fq2::new(regs[2], regs[3]), u * v, "{u} · {v}");
            assert_eq!(Fq2::new(regs[4], regs[5]), u.square(), "{u}²");
        }
    }
}

/// What a program costs the interpreter: instructions, stores to the register file (an
/// instruction that writes px stores nothing), and Fq products. docs/perf/wgpu.md cites these
/// counts; the asserts pin them.
#[test]
fn program_counts() {
    let count = |p: &Programs, names: &[&str]| -> [usize; 3] {
        let mut c = [0; 3];
        for name in names {
            let &(_, start, end) = p.ranges.iter().find(|r| r.0 == *name).unwrap();
            for &ins in &p.words[start as usize..end as usize] {
                let (op, kind) = (ins & 0xff, ins & 0xf);
                c[0] += 1;
                c[1] += usize::from(op & TO_PX == 0);
                c[2] += usize::from([OP_MUL, OP_MUL_SUM, OP_MUL_DIFF].contains(&kind));
            }
        }
        c
    };
    let madd = ["MADD_HEAD", "MADD_TAIL"];
    assert_eq!(count(&programs(Curve::G1), &madd), [17, 17, 10], "G1 mixed addition");
    assert_eq!(count(&programs(Curve::G2), &madd), [78, 52, 28], "G2 mixed addition");
}

#[test]
fn folding_drops_the_copies() {
    for curve in [Curve::G1, Curve::G2] {
        let p = programs(curve);
        for (name, start, end) in &p.ranges {
            let copies = p.words[*start as usize..*end as usize].iter().filter(|w| *w & 0xff == OP_COPY).count();
            assert_eq!(copies, 0, "{curve:?} {name}");
        }
    }
}

#[test]
fn programs_fit_the_interpreter() {
    for curve in [Curve::G1, Curve::G2] {
        let p = programs(curve);
        assert!(p.registers < 256, "{curve:?}: {} registers", p.registers);
        assert!(p.ranges.iter().all(|r| r.1 < r.2));
    }
}
