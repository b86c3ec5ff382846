//! A Groth16 key for a circuit, made here and written as a snarkjs `.zkey`, so that snarkjs
//! and g16 can prove the same circuit from the same file without a powers-of-tau ceremony.
//!
//! `snarkjs groth16 setup` needs a BLS12-381 powers of tau at twice the domain, which snarkjs
//! takes hours to make at 2^20; this makes the key from its trapdoor directly (a trusted setup
//! of one party, for tests and benchmarks, never for production). The key is laid out as
//! snarkjs lays out its own, on snarkjs's roots of unity ([`roots`](super::roots)):
//!
//! - constraint j at ω'ʲ, the input row of instance variable i at ω'^(m + i) (m constraints);
//! - u_k, v_k, w_k: variable k's A, B, C polynomials at τ, Σⱼ Mⱼₖ·Lⱼ(τ) over the domain's
//!   Lagrange basis Lⱼ(τ) = (τⁿ − 1)/n · ω'ʲ/(τ − ω'ʲ);
//! - A, B₁, B₂: u_k, v_k, v_k times the generators; IC (instance) and C (witness):
//!   (β·u_k + α·v_k + w_k)/γ and /δ;
//! - H point i: L^(2n)(τ) of the odd 2n-th root ψ'^(1+2i), over δ: the prover's a·b − c at the
//!   odd roots, multiplied by these, sums to h(τ)·Z(τ)/δ (the even roots are Z's zeros).

use ark_ec::scalar_mul::ScalarMul;
use ark_ec::{CurveGroup, PrimeGroup};
use ark_ff::{batch_inversion, BigInteger, Field, One, PrimeField, UniformRand, Zero};
use rand::{CryptoRng, RngCore};
use rayon::prelude::*;

use super::binfile::{self, FileKind};
use super::{field, roots, CircomError};
use crate::compiled::CompiledCircuit;
use crate::curve::{Fr, G1Affine, G2Affine};

/// Values per parallel task for the Lagrange basis.
const CHUNK: usize = 1 << 14;

/// A new key for `circuit` (its R1CS as constraints then input rows, with C: a circuit compiled
/// from arkworks or read from a `.r1cs`), written as a snarkjs `.zkey` of the circuit's
/// variables in their order (z = [1, public…, witness…]). The trapdoor comes from `rng` and
/// is dropped when this returns.
pub fn write_new_zkey<R: RngCore + CryptoRng>(circuit: &CompiledCircuit, rng: &mut R) -> Result<Vec<u8>, CircomError> {
    let (a, b, c) = circuit.matrices();
    let (m, instance, vars) = (circuit.num_constraints(), circuit.num_instance(), circuit.num_variables());
    let unsupported = |detail: &str| CircomError::Circuit(crate::compiled::CompileError::Inconsistent(detail.into()));
    let c = c.ok_or_else(|| unsupported("a circuit without its C matrix (read from a zkey) cannot be set up again"))?;
    if a.rows() != m + instance {
        return Err(unsupported("the circuit's A is not its constraints then its input rows"));
    }
    let n = circuit.domain_size();
    let log2 = n.trailing_zeros();
    let nonzero = |rng: &mut R| loop {
        let x = Fr::rand(rng);
        if !x.is_zero() {
            return x;
        }
    };
    let (alpha, beta, gamma, delta) = (nonzero(rng), nonzero(rng), nonzero(rng), nonzero(rng));
    let omega = roots::snarkjs_root(log2);
    let psi = roots::snarkjs_root(log2 + 1);
    // τ off both domains (else the Lagrange basis divides by zero); a random τ is, but for
    // chance, and then another is drawn.
    let tau = loop {
        let t = nonzero(rng);
        if !t.pow([2 * n as u64]).is_one() {
            break t;
        }
    };

    // Lⱼ(τ) over the n-th roots, and L(τ) of the odd 2n-th roots over δ.
    let lagrange = |points: Vec<Fr>, size: usize| -> Vec<Fr> {
        let scale = (tau.pow([size as u64]) - Fr::ONE) * Fr::from(size as u64).inverse().unwrap_or_default();
        let mut inverses: Vec<Fr> = points.par_iter().map(|x| tau - x).collect();
        inverses.par_chunks_mut(CHUNK).for_each(batch_inversion);
        points.par_iter().zip(inverses).map(|(x, inv)| scale * x * inv).collect()
    };
    let powers = |first: Fr| -> Vec<Fr> {
        let mut v = Vec::with_capacity(n);
        let mut x = first;
        for _ in 0..n {
            v.push(x);
            x *= omega;
        }
        v
    };
    let rows = lagrange(powers(Fr::ONE), n);
    let delta_inverse = delta.inverse().unwrap_or_default();
    let h: Vec<Fr> = lagrange(powers(psi), 2 * n).into_par_iter().map(|l| l * delta_inverse).collect();

    // u, v, w: each variable's polynomials at τ.
    let at_tau = |matrix: &g16_backend::SparseMatrix| {
        let mut out = vec![Fr::zero(); vars];
        for (row, l) in rows.iter().enumerate().take(matrix.rows()) {
            let (cols, coeffs) = matrix.row(row);
            for (&col, k) in cols.iter().zip(coeffs) {
                out[col as usize] += *k * l;
            }
        }
        out
    };
    let (u, v, w) = (at_tau(a), at_tau(b), at_tau(c));
    let gamma_inverse = gamma.inverse().unwrap_or_default();
    let combined = |k: usize| beta * u[k] + alpha * v[k] + w[k];
    let ic: Vec<Fr> = (0..instance).map(|k| combined(k) * gamma_inverse).collect();
    let l: Vec<Fr> = (instance..vars).into_par_iter().map(|k| combined(k) * delta_inverse).collect();

    let g1 = crate::curve::G1Projective::generator();
    let g2 = crate::curve::G2Projective::generator();
    let one_g1 = |x: Fr| (g1 * x).into_affine();
    let one_g2 = |x: Fr| (g2 * x).into_affine();
    let g1s = |xs: &[Fr]| -> Vec<G1Affine> { g1.batch_mul(xs) };

    // Sections, in snarkjs's order.
    let mut protocol = Vec::new();
    protocol.extend_from_slice(&1u32.to_le_bytes());
    let mut header = Vec::new();
    for (size, prime) in
        [(48u32, <ark_bls12_381::Fq as PrimeField>::MODULUS.to_bytes_le()), (32, Fr::MODULUS.to_bytes_le())]
    {
        header.extend_from_slice(&size.to_le_bytes());
        header.extend_from_slice(&prime);
    }
    for count in [vars, instance - 1, n] {
        header.extend_from_slice(&(count as u32).to_le_bytes());
    }
    field::put_g1_montgomery(&mut header, &one_g1(alpha));
    field::put_g1_montgomery(&mut header, &one_g1(beta));
    field::put_g2_montgomery(&mut header, &one_g2(beta));
    field::put_g2_montgomery(&mut header, &one_g2(gamma));
    field::put_g1_montgomery(&mut header, &one_g1(delta));
    field::put_g2_montgomery(&mut header, &one_g2(delta));
    let g1_section = |points: Vec<G1Affine>| {
        let mut out = Vec::with_capacity(points.len() * 96);
        points.iter().for_each(|p| field::put_g1_montgomery(&mut out, p));
        out
    };
    let ic = g1_section(g1s(&ic));
    let coefficients = coefficients(circuit);
    let a_points = g1_section(g1s(&u));
    let b1_points = g1_section(g1s(&v));
    let b2_points = {
        let points: Vec<G2Affine> = g2.batch_mul(&v);
        let mut out = Vec::with_capacity(points.len() * 192);
        points.iter().for_each(|p| field::put_g2_montgomery(&mut out, p));
        out
    };
    let c_points = g1_section(g1s(&l));
    let h_points = g1_section(g1s(&h));
    // No ceremony: a zero transcript hash and no contributions.
    let mut contributions = vec![0u8; 64];
    contributions.extend_from_slice(&0u32.to_le_bytes());
    Ok(binfile::write(
        FileKind::Zkey,
        1,
        &[
            (1, &protocol),
            (2, &header),
            (3, &ic),
            (4, &coefficients),
            (5, &a_points),
            (6, &b1_points),
            (7, &b2_points),
            (8, &c_points),
            (9, &h_points),
            (10, &contributions),
        ],
    ))
}

/// Section 4: A (its input rows included) and B, one entry per coefficient.
fn coefficients(circuit: &CompiledCircuit) -> Vec<u8> {
    let (a, b, _) = circuit.matrices();
    let mut out = Vec::new();
    let mut count = 0u32;
    out.extend_from_slice(&0u32.to_le_bytes());
    for (matrix, m) in [(0u32, a), (1, b)] {
        for row in 0..m.rows() {
            let (cols, coeffs) = m.row(row);
            for (&col, k) in cols.iter().zip(coeffs) {
                for word in [matrix, row as u32, col] {
                    out.extend_from_slice(&word.to_le_bytes());
                }
                field::put_zkey_coefficient(&mut out, k);
                count += 1;
            }
        }
    }
    out[..4].copy_from_slice(&count.to_le_bytes());
    out
}
