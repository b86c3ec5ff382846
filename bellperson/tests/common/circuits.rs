//! bellpepper circuits g16 never saw in its own code: bellpepper's sha256 and boolean gadgets
//! with multipacked public inputs, a MiMC permutation, and a circuit that synthesizes its parts
//! apart and joins them with `extend` when its system allows (bellperson's prover does, its
//! setup does not).

use bellpepper::gadgets::{multipack, sha256::sha256};
use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use ff::Field;
use g16_bellperson::Scalar;
use sha2::Digest;

fn missing() -> SynthesisError {
    SynthesisError::AssignmentMissing
}

/// Knows a preimage of a public SHA-256 digest (the digest's bits multipacked into inputs).
#[derive(Clone)]
pub struct Sha256Preimage {
    pub preimage: Option<Vec<u8>>,
    pub len: usize,
}

impl Sha256Preimage {
    pub fn public_inputs(preimage: &[u8]) -> Vec<Scalar> {
        let digest = sha2::Sha256::digest(preimage);
        multipack::compute_multipacking(&multipack::bytes_to_bits(&digest))
    }
}

impl Circuit<Scalar> for Sha256Preimage {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut bits = Vec::with_capacity(self.len * 8);
        for byte_i in 0..self.len {
            let byte = self.preimage.as_ref().map(|p| p[byte_i]);
            for bit_i in (0..8).rev() {
                let value = byte.map(|b| (b >> bit_i) & 1 == 1);
                let bit = AllocatedBit::alloc(cs.namespace(|| format!("bit {byte_i}.{bit_i}")), value)?;
                bits.push(Boolean::from(bit));
            }
        }
        let digest = sha256(cs.namespace(|| "sha256"), &bits)?;
        multipack::pack_into_inputs(cs.namespace(|| "digest"), &digest)
    }
}

/// MiMC with x³ rounds over the scalar field: knows (xl, xr) whose image's left half is public.
#[derive(Clone)]
pub struct MiMC {
    pub xl: Option<Scalar>,
    pub xr: Option<Scalar>,
    pub constants: Vec<Scalar>,
}

impl MiMC {
    pub fn constants(rounds: usize) -> Vec<Scalar> {
        (0..rounds as u64).map(|i| Scalar::from(i * i * 7 + 3).square() + Scalar::from(i)).collect()
    }

    /// The permutation computed natively: the image's left half.
    pub fn image(mut xl: Scalar, mut xr: Scalar, constants: &[Scalar]) -> Scalar {
        for c in constants {
            let t = xl + c;
            let next = t.square() * t + xr;
            xr = xl;
            xl = next;
        }
        xl
    }
}

impl Circuit<Scalar> for MiMC {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let (mut xl_value, mut xr_value) = (self.xl, self.xr);
        let mut xl = cs.alloc(|| "xl", || xl_value.ok_or_else(missing))?;
        let mut xr = cs.alloc(|| "xr", || xr_value.ok_or_else(missing))?;
        let last = self.constants.len() - 1;
        for (i, c) in self.constants.iter().enumerate() {
            let cs = &mut cs.namespace(|| format!("round {i}"));
            let t_value = xl_value.map(|x| x + c);
            let sq_value = t_value.map(|t| t.square());
            let sq = cs.alloc(|| "(xl + c)^2", || sq_value.ok_or_else(missing))?;
            cs.enforce(|| "square", |lc| lc + xl + (*c, CS::one()), |lc| lc + xl + (*c, CS::one()), |lc| lc + sq);
            let next_value = t_value.zip(sq_value).zip(xr_value).map(|((t, sq), xr)| sq * t + xr);
            let next = if i == last {
                cs.alloc_input(|| "image", || next_value.ok_or_else(missing))?
            } else {
                cs.alloc(|| "xl'", || next_value.ok_or_else(missing))?
            };
            cs.enforce(|| "cube", |lc| lc + sq, |lc| lc + xl + (*c, CS::one()), |lc| lc + next - xr);
            (xr, xr_value) = (xl, xl_value);
            (xl, xl_value) = (next, next_value);
        }
        Ok(())
    }
}

/// Parts of one statement, each a public y_k = x_k² + k·x_k + k with x_k private, and a variable
/// absent from A and B (bellperson's files leave out its a and b points). Where the system is
/// extensible the parts are synthesized on their own threads in fresh systems (each with a
/// temporary ONE first) and joined in order with `extend`; elsewhere in line.
#[derive(Clone)]
pub struct Parts {
    pub xs: Vec<Option<Scalar>>,
}

impl Parts {
    pub fn public_inputs(xs: &[Scalar]) -> Vec<Scalar> {
        xs.iter().enumerate().map(|(k, x)| Self::y(k, *x)).collect()
    }

    fn y(k: usize, x: Scalar) -> Scalar {
        let k = Scalar::from(k as u64);
        x.square() + k * x + k
    }

    fn part<CS: ConstraintSystem<Scalar>>(cs: &mut CS, k: usize, x_value: Option<Scalar>) -> Result<(), SynthesisError> {
        let kk = Scalar::from(k as u64);
        let x = cs.alloc(|| "x", || x_value.ok_or_else(missing))?;
        let y = cs.alloc_input(|| "y", || x_value.map(|x| Self::y(k, x)).ok_or_else(missing))?;
        // w is only in C, so bellperson's files hold no a or b point for it; for k = 0 the
        // terms k·ONE are zero coefficients, which count for nothing.
        let w = cs.alloc(|| "w = x + k", || x_value.map(|x| x + kk).ok_or_else(missing))?;
        cs.enforce(|| "w", |lc| lc + CS::one(), |lc| lc + x + (kk, CS::one()), |lc| lc + w);
        cs.enforce(|| "x (x + k) = y - k", |lc| lc + x, |lc| lc + x + (kk, CS::one()), |lc| lc + y - (kk, CS::one()));
        Ok(())
    }
}

impl Circuit<Scalar> for Parts {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        if !CS::is_extensible() {
            for (k, x) in self.xs.into_iter().enumerate() {
                Self::part(&mut cs.namespace(|| format!("part {k}")), k, x)?;
            }
            return Ok(());
        }
        let parts: Vec<Result<CS, SynthesisError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = self
                .xs
                .iter()
                .enumerate()
                .map(|(k, &x)| {
                    scope.spawn(move || {
                        let mut sub = CS::new();
                        sub.alloc_input(|| "temporary ONE", || Ok(Scalar::ONE))?;
                        Self::part(&mut sub, k, x)?;
                        Ok(sub)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().expect("a part's thread")).collect()
        });
        for part in parts {
            cs.extend(&part?);
        }
        Ok(())
    }
}
