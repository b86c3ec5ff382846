//! snarkjs's roots of unity are not arkworks': where a snarkjs key's rows and H points sit in
//! g16's domain.
//!
//! Both take a primitive 2^32-th root of unity of Fr as g^t (r − 1 = 2^32·t, t odd) and
//! square it down to each domain size, but from different g: arkworks (and so every g16
//! backend) from Fr's multiplicative generator 7, snarkjs (ffjavascript) from the smallest
//! quadratic non-residue, 5. So snarkjs's primitive 2n-th root is ψ' = ψ^K for arkworks' ψ and
//! one odd K, and its n-th root ω' = ψ'² = ω^K. A snarkjs key was made for constraint i at ω'^i
//! = ω^(K·i mod n): g16's row K·i mod n. Its H point i stands for the odd 2n-th root ψ'^(1+2i)
//! = ψ^(K(1+2i) mod 2n), which g16's odd-coset NTT (ψ·ω^j = ψ^(1+2j)) puts at index j with
//! 1 + 2j ≡ K(1 + 2i) (mod 2n). Re-indexed so when the key is read, the rows and points need
//! no other treatment: the backends keep one set of roots.

use ark_ff::{Field, PrimeField};

use crate::curve::Fr;

/// arkworks' and snarkjs's generators of Fr's 2-power roots of unity.
const ARKWORKS_GENERATOR: u64 = 7;
const SNARKJS_GENERATOR: u64 = 5;

/// Where a snarkjs key's rows and H points of a domain of n go in g16's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reindex {
    n: u64,
    /// K mod 2n.
    k: u64,
    /// K⁻¹ mod 2n (K is odd, so it has one).
    k_inverse: u64,
}

impl Reindex {
    /// The re-indexing for a domain of `n` points (a power of two, 2n ≤ 2^32); `None` otherwise.
    pub fn new(n: usize) -> Option<Reindex> {
        let log2 = n.trailing_zeros() + 1;
        if !n.is_power_of_two() || log2 > <Fr as ark_ff::FftField>::TWO_ADICITY {
            return None;
        }
        let psi = root(ARKWORKS_GENERATOR, log2);
        let psi_snarkjs = root(SNARKJS_GENERATOR, log2);
        let k = discrete_log(psi, psi_snarkjs, log2)?;
        Some(Reindex { n: n as u64, k, k_inverse: inverse_mod_power_of_two(k, 2 * n as u64) })
    }

    /// g16's row for snarkjs's row `i`. (n and 2n are powers of two: the products are taken
    /// modulo 2^64 and masked, no division.)
    pub fn row(&self, i: usize) -> usize {
        (self.k.wrapping_mul(i as u64) & (self.n - 1)) as usize
    }

    /// g16's index of snarkjs's H point `i`.
    pub fn h_point(&self, i: usize) -> usize {
        odd_index(self.k, self.n, i)
    }

    /// snarkjs's H point at g16's index `j`: [`Reindex::h_point`]'s inverse, so that H can be
    /// decoded straight into g16's order, each point on its own.
    pub fn h_source(&self, j: usize) -> usize {
        odd_index(self.k_inverse, self.n, j)
    }
}

/// j with 1 + 2j ≡ k(1 + 2i) (mod 2n), for an odd k.
fn odd_index(k: u64, n: u64, i: usize) -> usize {
    let odd = k.wrapping_mul(1 + 2 * i as u64) & (2 * n - 1);
    ((odd - 1) / 2) as usize
}

/// The inverse of an odd `k` modulo `m`, a power of two: Newton's iteration, each step
/// doubling the bits that are right (k is its own inverse modulo 8).
fn inverse_mod_power_of_two(k: u64, m: u64) -> u64 {
    let mut x = k;
    for _ in 0..6 {
        x = x.wrapping_mul(2u64.wrapping_sub(k.wrapping_mul(x)));
    }
    x & (m - 1)
}

/// snarkjs's primitive 2^log2-th root of unity (log2 ≤ 32): where a zkey g16 writes puts its
/// rows and H points, as snarkjs's own setup would.
pub(super) fn snarkjs_root(log2: u32) -> Fr {
    root(SNARKJS_GENERATOR, log2)
}

/// The primitive 2^log2-th root of unity squared down from `generator`^t.
fn root(generator: u64, log2: u32) -> Fr {
    let mut w = Fr::from(generator).pow(Fr::TRACE);
    for _ in log2..<Fr as ark_ff::FftField>::TWO_ADICITY {
        w.square_in_place();
    }
    w
}

/// K with base^K = target in the group of order 2^log2 that `base` generates (Pohlig–Hellman:
/// one bit of K per step); `None` where target is not in it.
fn discrete_log(base: Fr, target: Fr, log2: u32) -> Option<u64> {
    let mut k = 0u64;
    let mut rest = target;
    let mut base_power = base;
    for bit in 0..log2 {
        // rest = target·base^(−k) has order dividing 2^(log2 − bit); raised to 2^(log2 − bit − 1)
        // it is 1 or −1, and −1 says that bit of K is set.
        let probe = (0..log2 - bit - 1).fold(rest, |x, _| x.square());
        if probe != Fr::from(1u64) {
            k |= 1 << bit;
            rest *= base_power.inverse()?;
        }
        base_power.square_in_place();
    }
    (rest == Fr::from(1u64)).then_some(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snarkjs_roots_are_powers_of_arkworks_roots() {
        for log2 in [1, 2, 3, 8, 20, 32] {
            let n = 1usize << (log2 - 1);
            let r = Reindex::new(n).unwrap();
            let psi = root(ARKWORKS_GENERATOR, log2);
            assert_eq!(psi.pow([r.k]), root(SNARKJS_GENERATOR, log2), "2^{log2}");
            assert_eq!(r.k % 2, 1, "K is odd, so both maps are permutations");
            if n <= 1 << 12 {
                let mut rows: Vec<usize> = (0..n).map(|i| r.row(i)).collect();
                let mut points: Vec<usize> = (0..n).map(|i| r.h_point(i)).collect();
                rows.sort_unstable();
                points.sort_unstable();
                assert!(rows == (0..n).collect::<Vec<_>>() && points == rows, "2^{log2}");
                // snarkjs's H point i is the root g16 evaluates at index h_point(i).
                let omega = psi.square();
                for i in [0, 1, n / 2, n - 1] {
                    let snarkjs = root(SNARKJS_GENERATOR, log2).pow([1 + 2 * i as u64]);
                    assert_eq!(psi * omega.pow([r.h_point(i) as u64]), snarkjs);
                }
            }
        }
        // h_source undoes h_point, at every index of small domains and at the ends of large ones.
        for log2 in [1, 2, 3, 8, 12, 20, 32] {
            let n = 1usize << (log2 - 1);
            let r = Reindex::new(n).unwrap();
            let all = if n <= 1 << 11 { (0..n).collect() } else { vec![0, 1, 2, n / 2, n - 2, n - 1] };
            for i in all {
                let (k, n) = (r.k as u128, n as u128);
                assert_eq!(r.row(i) as u128, k * i as u128 % n, "2^{log2}, row {i}");
                assert_eq!(2 * r.h_point(i) as u128 + 1, k * (1 + 2 * i as u128) % (2 * n), "2^{log2}, point {i}");
                assert_eq!(r.h_source(r.h_point(i)), i, "2^{log2}, point {i}");
                assert_eq!(r.h_point(r.h_source(i)), i, "2^{log2}, index {i}");
            }
        }
        // arkworks' root is the one its domains use.
        let domain = <ark_poly::Radix2EvaluationDomain<Fr> as ark_poly::EvaluationDomain<Fr>>::new(256).unwrap();
        assert_eq!(domain.group_gen, root(ARKWORKS_GENERATOR, 8));
        assert!(Reindex::new(3).is_none() && Reindex::new(1 << 32).is_none());
    }
}
