//! The evaluation domain's maths, in one place: the radix-2 domains of Fr, their cosets, the
//! vanishing polynomial, and the reference NTT on the host. The CPU backend's NTTs, the prover's
//! quotient and every backend's conformance check use these, so all agree on one domain.

use ark_ff::{FftField, Field};
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};

use crate::curve::Fr;
use crate::error::{BackendError, BackendResult};

/// Fr's two-adicity: the largest power-of-two subgroup, so the largest radix-2 NTT.
pub const MAX_NTT_LOG2: u32 = <Fr as FftField>::TWO_ADICITY;

/// The smallest radix-2 domain with at least `len` points, or `None` past 2^[`MAX_NTT_LOG2`].
pub fn radix2(len: usize) -> Option<Radix2EvaluationDomain<Fr>> {
    Radix2EvaluationDomain::<Fr>::new(len)
}

/// The NTT of `kind` in place on the host, with arkworks' radix-2 domains: the CPU backend's,
/// and the reference every other backend's NTTs are checked against.
pub fn ntt_in_place(v: &mut Vec<Fr>, kind: NttKind) -> BackendResult<()> {
    let size_error = BackendError::NttSize { len: v.len(), max_log2: MAX_NTT_LOG2 };
    check_ntt_len(v.len(), MAX_NTT_LOG2)?;
    let domain = radix2(v.len()).ok_or(size_error)?;
    match kind {
        NttKind::Forward => domain.fft_in_place(v),
        NttKind::Inverse => domain.ifft_in_place(v),
        NttKind::CosetForward => coset(&domain).fft_in_place(v),
        NttKind::CosetInverse => coset(&domain).ifft_in_place(v),
        NttKind::OddCosetForward => odd_coset(&domain).fft_in_place(v),
    }
    Ok(())
}

/// The coset `ω₂ₙ·H` of the odd 2n-th roots of unity, as snarkjs's Groth16 uses it.
fn odd_coset(domain: &Radix2EvaluationDomain<Fr>) -> Radix2EvaluationDomain<Fr> {
    // A domain of n < 2^32 has a 2n-th root (Fr's two-adicity is 32); it is not zero.
    Fr::get_root_of_unity(2 * domain.size() as u64).and_then(|w| domain.get_coset(w)).unwrap_or(*domain)
}

/// The coset `g·H` of the multiplicative generator, as arkworks' Groth16 uses it.
fn coset(domain: &Radix2EvaluationDomain<Fr>) -> Radix2EvaluationDomain<Fr> {
    // get_coset only fails for a zero offset; GENERATOR is not zero.
    domain.get_coset(Fr::GENERATOR).unwrap_or(*domain)
}

/// `Z_H(g)⁻¹ = (gⁿ − 1)⁻¹`: the vanishing polynomial of H on the coset generator, inverted.
/// H divides by it on every coset point, since `Z_H(g·ωⁱ) = gⁿ − 1` for all i.
pub fn vanishing_inverse_on_coset(domain_size: usize) -> Option<Fr> {
    let domain = radix2(domain_size)?;
    domain.evaluate_vanishing_polynomial(Fr::GENERATOR).inverse()
}

/// The four NTTs over Fr. Coset NTTs are on the coset `g·H` of the multiplicative
/// generator `g = Fr::GENERATOR` (7), as arkworks' `get_coset(F::GENERATOR)`.
///
/// - `Forward`: coefficients → evaluations on H.
/// - `Inverse`: evaluations on H → coefficients.
/// - `CosetForward`: coefficients → evaluations on gH.
/// - `CosetInverse`: evaluations on gH → coefficients.
/// - `OddCosetForward`: coefficients → evaluations on ω₂ₙ·H, the odd powers of a primitive
///   2n-th root of unity (snarkjs's QAP evaluates H there; ω₂ₙ = `Fr::get_root_of_unity(2n)`).
///
/// Inputs and outputs are in natural order; how a backend avoids bit-reversal passes is its own affair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NttKind {
    Forward,
    Inverse,
    CosetForward,
    CosetInverse,
    OddCosetForward,
}

impl NttKind {
    pub const ALL: [NttKind; 5] =
        [NttKind::Forward, NttKind::Inverse, NttKind::CosetForward, NttKind::CosetInverse, NttKind::OddCosetForward];

    /// The span name devices use for this NTT, so backends' timelines compare line by line.
    pub fn span_name(&self) -> &'static str {
        match self {
            NttKind::Forward => "ntt",
            NttKind::Inverse => "ntt_inverse",
            NttKind::CosetForward => "ntt_coset",
            NttKind::CosetInverse => "ntt_coset_inverse",
            NttKind::OddCosetForward => "ntt_odd_coset",
        }
    }

    /// Whether it maps evaluations back to coefficients (ω⁻¹ twiddles, a 1/n scaling).
    pub fn is_inverse(&self) -> bool {
        matches!(self, NttKind::Inverse | NttKind::CosetInverse)
    }
}

/// Checks an NTT's length: a power of two between 2 and 2^`max_log2`.
pub fn check_ntt_len(len: usize, max_log2: u32) -> BackendResult<()> {
    if len < 2 || !len.is_power_of_two() || len.trailing_zeros() > max_log2 {
        Err(BackendError::NttSize { len, max_log2 })
    } else {
        Ok(())
    }
}
