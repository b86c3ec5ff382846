//! The kernels' field and curve arithmetic, run on the host: `kernels/field/` and
//! `kernels/curve/` are compiled by the host's C++ compiler with `G16_HOST_EMULATION` (the PTX
//! carry chain becomes the same chain with an emulated carry flag) and checked against arkworks
//! on fresh random values and edge cases. This catches a wrong constant, carry or formula
//! without a GPU; the GPU suite (`tests/backend.rs` on a CUDA machine) checks the PTX itself.
//! Without a C++ compiler it says so loudly and passes, unless `G16_REQUIRE_CXX=1`.

mod common;

use std::path::PathBuf;

use common::cxx;

use ark_bls12_381::{Fq, Fq2, Fr, G1Projective, G2Projective};
use ark_ec::{AffineRepr, CurveGroup, PrimeGroup};
use ark_ff::{Field, PrimeField, UniformRand, Zero};
use g16_backend::limbs::{
    fq_from_words, fq_to_words, fr_from_words, fr_to_words, g1_to_words, g1_xyzz_to_projective, g2_to_words,
    g2_xyzz_to_projective, FQ_WORDS, FR_WORDS, G1_WORDS, G1_XYZZ_WORDS, G2_WORDS, G2_XYZZ_WORDS,
};
use g16_backend::sample::test_rng;

const HARNESS: &str = r#"
#include <cstdio>
template <class F> void rd(F& x) { for (int i = 0; i < F::N; i++) if (scanf("%x", &x.l[i]) != 1) exit(2); }
template <class F> void pr(const F& x) { for (int i = 0; i < F::N; i++) printf("%x ", x.l[i]); printf("\n"); }
void pr(const Xyzz<Fq>& p) { pr(p.x); pr(p.y); pr(p.zz); pr(p.zzz); }
void pr(const Fq2& x) { pr(x.c0); pr(x.c1); }
void pr(const Xyzz<Fq2>& p) { pr(p.x); pr(p.y); pr(p.zz); pr(p.zzz); }
void rd(Fq2& x) { rd(x.c0); rd(x.c1); }
int main() {
  int cases;
  if (scanf("%d", &cases) != 1) return 2;
  for (int c = 0; c < cases; c++) {
    Fr a, b; rd(a); rd(b);
    pr(a * b); pr(a + b); pr(a - b); pr(a.from_montgomery());
    Fq x, y; rd(x); rd(y);
    pr(x * y); pr(x + y); pr(x - y); pr(x.sqr()); pr(x.neg()); pr(x.inverse());
    Fq2 u, v; rd(u.c0); rd(u.c1); rd(v.c0); rd(v.c1);
    Fq2 m = u * v, s = u.sqr(), iv = u.inverse();
    pr(m.c0); pr(m.c1); pr(s.c0); pr(s.c1); pr(iv.c0); pr(iv.c1);
    pr(Fq::mul_sub_mul(x, y, u.c0, v.c0)); pr(Fq::mul_sub_mul(x, y, u.c1, Fq::zero()));
    Fq2 f1 = Fq2::mul_sub_mul(u, v, v, s), f2 = Fq2::mul_sub_mul(u, v, u, Fq2::zero());
    pr(f1.c0); pr(f1.c1); pr(f2.c0); pr(f2.c1);
    Fq2 i = Fq2::zero(); i.c1 = Fq::one();  // u² = −1: c0's double-width value is negative
    Fq2 f3 = Fq2::mul_sub_mul(i, i, Fq2::zero(), Fq2::zero()); pr(f3.c0); pr(f3.c1);
    Affine<Fq> P, Q; rd(P.x); rd(P.y); rd(Q.x); rd(Q.y);
    Xyzz<Fq> sum = Xyzz<Fq>::from_affine(P); sum.add_affine(Q); pr(sum);            // P + Q
    Xyzz<Fq> d = Xyzz<Fq>::from_affine(P); d.dbl(); pr(d);                          // 2P
    Xyzz<Fq> e = Xyzz<Fq>::from_affine(P); e.add_affine(P); pr(e);                  // P + P
    Xyzz<Fq> f = sum; Xyzz<Fq> g = Xyzz<Fq>::from_affine(Q.neg()); g.dbl(); f.add(g); f.add(d); pr(f);  // 3P − Q
    Xyzz<Fq> h = Xyzz<Fq>::from_affine(P); h.add_affine(P.neg()); pr(h);            // identity
    Xyzz<Fq> k = Xyzz<Fq>::identity(); k.add(d); k.add(Xyzz<Fq>::identity()); k.add(d); pr(k);  // 4P
    Xyzz<Fq> fu = Xyzz<Fq>::from_affine(P); fu.add_affine_inline<true>(Q); pr(fu);  // P + Q, Y₃ fused
    fu.add_affine_inline<true>(Q); pr(fu);                                          // P + 2Q (ZZ ≠ 1)
    Affine<Fq2> R, S; rd(R.x); rd(R.y); rd(S.x); rd(S.y);
    Xyzz<Fq2> rs = Xyzz<Fq2>::from_affine(R); rs.add_affine(S); pr(rs);             // R + S
    rs.add_affine(S); pr(rs);                                                       // R + 2S
    Xyzz<Fq2> rr = Xyzz<Fq2>::from_affine(R); rr.add_affine(R); pr(rr);             // R + R
    Xyzz<Fq2> r0 = Xyzz<Fq2>::from_affine(R); r0.add_affine(R.neg()); pr(r0);       // identity
    Xyzz<Fq2> r3 = Xyzz<Fq2>::from_affine(R); r3.dbl(); r3.add(rs); pr(r3);          // 3R + 2S
    Xyzz<Fq2> rf = Xyzz<Fq2>::from_affine(R); rf.add_affine<true>(S); rf.add_affine<true>(S); pr(rf);  // R + 2S, fused
  }
  return 0;
}
"#;

fn words_hex(w: &[u32]) -> String {
    w.iter().map(|x| format!("{x:x}")).collect::<Vec<_>>().join(" ")
}

fn fr_words(x: &Fr) -> Vec<u32> {
    let mut w = vec![0u32; FR_WORDS];
    fr_to_words(x, &mut w);
    w
}

fn fq_words(x: &Fq) -> Vec<u32> {
    let mut w = vec![0u32; FQ_WORDS];
    fq_to_words(x, &mut w);
    w
}

/// The element whose Montgomery limbs are p − 1: the largest value an operand's limbs hold.
fn fq_max_limbs() -> Fq {
    let mut limbs = Fq::MODULUS;
    limbs.0[0] -= 1; // p's low limb is odd: no borrow
    Fq::new_unchecked(limbs)
}

#[test]
fn kernel_arithmetic_matches_arkworks_on_the_host() {
    let Some(cxx) = cxx::compiler_or_skip("the host-emulated kernel arithmetic") else { return };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("host_arithmetic");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let exe = dir.join("harness");
    let source = format!("#include <cstdlib>\n{}\n{HARNESS}", g16_cuda::compile::arithmetic_headers());
    cxx::build(&cxx, &source, &exe, "-O1");
    let mut rng = test_rng("kernel_arithmetic_matches_arkworks_on_the_host");
    let cases = 64;
    let mut input = format!("{cases}\n");
    let mut expected: Vec<Vec<u32>> = Vec::new();
    let mut points: Vec<Vec<G1Projective>> = Vec::new();
    let mut points2: Vec<Vec<G2Projective>> = Vec::new();
    for c in 0..cases {
        // Edge values first: r − 1 and p − 1 (the largest), zero, one.
        let (a, b) = match c {
            0 => (-Fr::ONE, -Fr::ONE),
            1 => (Fr::zero(), -Fr::ONE),
            2 => (Fr::ONE, Fr::ONE),
            _ => (Fr::rand(&mut rng), Fr::rand(&mut rng)),
        };
        // `max` is the largest representation (limbs p − 1), `low` the smallest nonzero (limbs 1).
        let (max, low) = (fq_max_limbs(), fq_from_words(&[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]));
        let (x, y) = match c {
            0 => (-Fq::ONE, -Fq::ONE),
            1 => (Fq::zero(), -Fq::ONE),
            2 => (max, max),
            _ => (Fq::rand(&mut rng), Fq::rand(&mut rng)),
        };
        // Fq2: the largest operands, and products whose c0 = a0·b0 − a1·b1 is negative before
        // the reduction (the lazy product adds p·R then) or zero.
        let (u, v) = match c {
            0 => (Fq2::new(max, max), Fq2::new(max, max)),
            1 => (Fq2::new(Fq::zero(), max), Fq2::new(max, max)),
            2 => (Fq2::new(low, max), Fq2::new(low, max)),
            3 => (Fq2::new(max, Fq::zero()), Fq2::new(Fq::zero(), max)),
            4 => (Fq2::new(low, low), Fq2::new(low, low)),
            5 => (Fq2::zero(), Fq2::rand(&mut rng)),
            6 => (Fq2::new(-Fq::ONE, -Fq::ONE), Fq2::new(-Fq::ONE, -Fq::ONE)),
            _ => (Fq2::rand(&mut rng), Fq2::rand(&mut rng)),
        };
        let p = (G1Projective::generator() * Fr::rand(&mut rng)).into_affine();
        let q = (G1Projective::generator() * Fr::rand(&mut rng)).into_affine();
        let r2 = (G2Projective::generator() * Fr::rand(&mut rng)).into_affine();
        let s2 = (G2Projective::generator() * Fr::rand(&mut rng)).into_affine();
        for w in [fr_words(&a), fr_words(&b), fq_words(&x), fq_words(&y)] {
            input += &words_hex(&w);
            input.push('\n');
        }
        for f in [u.c0, u.c1, v.c0, v.c1] {
            input += &words_hex(&fq_words(&f));
            input.push('\n');
        }
        let mut pw = vec![0u32; 2 * G1_WORDS];
        g1_to_words(&p, &mut pw[..G1_WORDS]);
        g1_to_words(&q, &mut pw[G1_WORDS..]);
        input += &words_hex(&pw);
        input.push('\n');
        let mut qw = vec![0u32; 2 * G2_WORDS];
        g2_to_words(&r2, &mut qw[..G2_WORDS]);
        g2_to_words(&s2, &mut qw[G2_WORDS..]);
        input += &words_hex(&qw);
        input.push('\n');

        let plain: Vec<u32> = a.into_bigint().0.iter().flat_map(|l| [*l as u32, (*l >> 32) as u32]).collect();
        expected.extend([fr_words(&(a * b)), fr_words(&(a + b)), fr_words(&(a - b)), plain]);
        // The kernels' inverse maps 0 to 0 (case 1's x).
        let x_inv = x.inverse().unwrap_or(Fq::zero());
        expected.extend([x * y, x + y, x - y, x.square(), -x, x_inv].iter().map(fq_words));
        let (m, s, iv) = (u * v, u.square(), u.inverse().unwrap_or(Fq2::zero()));
        expected.extend([m.c0, m.c1, s.c0, s.c1, iv.c0, iv.c1].iter().map(fq_words));
        expected.extend([x * y - u.c0 * v.c0, x * y].iter().map(fq_words));
        let (f1, f2) = (u * v - v * u.square(), u * v);
        expected.extend([f1.c0, f1.c1, f2.c0, f2.c1, -Fq::ONE, Fq::zero()].iter().map(fq_words));
        let (pp, qp) = (p.into_group(), q.into_group());
        points.push(vec![
            pp + qp,
            pp + pp,
            pp + pp,
            pp * Fr::from(3u64) - qp,
            G1Projective::zero(),
            pp * Fr::from(4u64),
            pp + qp,
            pp + qp + qp,
        ]);
        let (rp, sp) = (r2.into_group(), s2.into_group());
        points2.push(vec![
            rp + sp,
            rp + sp + sp,
            rp + rp,
            G2Projective::zero(),
            rp * Fr::from(3u64) + sp + sp,
            rp + sp + sp,
        ]);
    }

    let text = cxx::run(&exe, &input);
    let mut lines = text
        .lines()
        .map(|l| l.split_whitespace().map(|w| u32::from_str_radix(w, 16).expect("hex")).collect::<Vec<u32>>());
    let names = [
        "Fr mul",
        "Fr add",
        "Fr sub",
        "Fr from_montgomery",
        "Fq mul",
        "Fq add",
        "Fq sub",
        "Fq sqr",
        "Fq neg",
        "Fq inverse",
        "Fq2 mul c0",
        "Fq2 mul c1",
        "Fq2 sqr c0",
        "Fq2 sqr c1",
        "Fq2 inverse c0",
        "Fq2 inverse c1",
        "Fq mul_sub_mul",
        "Fq mul_sub_mul by zero",
        "Fq2 mul_sub_mul c0",
        "Fq2 mul_sub_mul c1",
        "Fq2 mul_sub_mul by zero c0",
        "Fq2 mul_sub_mul by zero c1",
        "Fq2 mul_sub_mul u² c0",
        "Fq2 mul_sub_mul u² c1",
    ];
    let point_names = [
        "P + Q",
        "2P (dbl)",
        "P + P (madd doubling case)",
        "3P − Q (add)",
        "P − P",
        "4P (add with identities)",
        "P + Q (madd, Y₃ under one reduction)",
        "P + 2Q (madd, Y₃ under one reduction, ZZ ≠ 1)",
    ];
    let point_names2 = [
        "R + S",
        "R + 2S (madd, ZZ ≠ 1)",
        "R + R (madd doubling case)",
        "R − R",
        "2R + (R + 2S) (dbl, add)",
        "R + 2S (madd, Y₃'s products reduced together)",
    ];
    for c in 0..cases as usize {
        for (i, name) in names.iter().enumerate() {
            let got = lines.next().expect("output line");
            let want = &expected[c * names.len() + i];
            assert_eq!(&got, want, "case {c}: {name}");
        }
        // Sanity of the conversions used above.
        let _ = (fq_from_words(&expected[c * names.len() + 4]), fr_from_words(&expected[c * names.len()]));
        for (j, name) in point_names.iter().enumerate() {
            let xyzz: Vec<u32> = (0..4).flat_map(|_| lines.next().expect("output line")).collect();
            assert_eq!(xyzz.len(), G1_XYZZ_WORDS);
            assert_eq!(g1_xyzz_to_projective(&xyzz), points[c][j], "case {c}: {name}");
        }
        for (j, name) in point_names2.iter().enumerate() {
            let xyzz: Vec<u32> = (0..8).flat_map(|_| lines.next().expect("output line")).collect();
            assert_eq!(xyzz.len(), G2_XYZZ_WORDS);
            assert_eq!(g2_xyzz_to_projective(&xyzz), points2[c][j], "case {c}: G2 {name}");
        }
    }
    assert!(lines.next().is_none(), "no extra output");
}
