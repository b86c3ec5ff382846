//! The Groth16 prover, generic over the backend.
//!
//! For a circuit with assignment `z` (z₀ = 1) and randomness (r, s), over the key's points:
//!
//! ```text
//! H = ((A·z)(X)·(B·z)(X) − (C·z)(X)) / Z_H(X), computed on the coset gH   (steps 2–3)
//! A = α + Σ zᵢ·aᵢ + r·δ                                                   (G1)
//! B = β + Σ zᵢ·bᵢ + s·δ                                                   (G2, and in G1 for C)
//! C = s·A + r·B₁ − r·s·δ + Σ_{witness} zᵢ·lᵢ + Σ hᵢ·h_query_i            (G1)
//! ```
//!
//! Group elements have one canonical affine form, so computing the same sums in any order
//! on any device gives the proof `ark_groth16::Groth16::create_proof_with_reduction` gives
//! (libsnark reduction), bit for bit — which the tests check.

pub mod error;
pub mod key;
pub mod memory;
mod prepared;
mod randomness;
pub mod setup;
pub mod synthesis;

use ark_ec::{AffineRepr, CurveGroup};
use ark_ff::Zero;
use ark_relations::gr1cs::ConstraintSynthesizer;
use rand::{CryptoRng, RngCore};

pub use error::ProveError;
pub use key::{CheckedKey, DecodedKey, KeyError, KeyShape, OnBackend, OnHost, PointChecks, PointProblem, Qap, SubgroupCheck};
pub use prepared::{PreparedCircuit, PreparedKey};
pub use randomness::Randomness;
pub use setup::SetupError;
pub use synthesis::{synthesize, Synthesized};

use g16_backend::{domain::vanishing_inverse_on_coset, Backend, BackendKind, NttKind, ScalarBuffer, Scalars};
use crate::compiled::{CompiledCircuit, ShapeMismatch};
use crate::timeline::{Layer, Timeline};
use crate::curve::{Fr, G1Projective, G2Projective, Proof};

/// A partition's inputs on the device, between [`Prover::stage`] and [`Prover::release`].
/// Dropping it frees the device memory.
pub struct Staged {
    /// a's evaluations; after [`Prover::compute`], H's coefficients.
    a: ScalarBuffer,
    /// b and c, until H is formed.
    bc: Option<(ScalarBuffer, ScalarBuffer)>,
    /// The assignment z, scalars of every MSM but H's.
    z: ScalarBuffer,
    num_instance: usize,
    num_variables: usize,
    domain_size: usize,
}

/// The MSM sums of one proof, on the host: what [`assemble`] turns into a proof.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MsmSums {
    pub a: G1Projective,
    /// Zero when r is zero (not computed).
    pub b_g1: G1Projective,
    pub b_g2: G2Projective,
    pub l: G1Projective,
    pub h: G1Projective,
}

/// Makes proofs on one backend. Cheap to create; the backend and keys are what is costly.
pub struct Prover<'b, B: Backend + ?Sized> {
    backend: &'b B,
}

impl<'b, B: Backend + ?Sized> Prover<'b, B> {
    pub fn new(backend: &'b B) -> Self {
        Prover { backend }
    }

    pub fn backend(&self) -> &'b B {
        self.backend
    }

    /// Uploads a key's bases once; reuse the result for every proof on this backend.
    ///
    /// On a GPU backend it then runs one proof's device work on made-up values ([`Prover::warm_up`]),
    /// so that the first proof costs what every later one does.
    pub fn prepare(&self, key: &CheckedKey) -> Result<PreparedKey, ProveError> {
        let prepared = self.prepare_for_one_proof(key)?;
        self.warm_up(&prepared)?;
        Ok(prepared)
    }

    /// Uploads a key's bases without the warm-up: for a process that makes one proof with the
    /// key, where warming up would cost about as much device time as the proof it speeds up.
    pub fn prepare_for_one_proof(&self, key: &CheckedKey) -> Result<PreparedKey, ProveError> {
        PreparedKey::new(self.backend, key)
    }

    /// H and the MSMs of one proof, on values mixed like a witness's (zeros, ones, full-width),
    /// their result thrown away. A GPU backend makes some of its state on first use: NTT
    /// tables and scratch for the domain, MSM workspaces for each length, the pipelines of
    /// each path; an H200 trace of a first wgpu proof at 2^22 showed 1.4 s of it inside
    /// `msm_g1_a` alone. Made here, it counts as the key's preparation, never as a proof's.
    /// (The CPU backend keeps no such state, so its keys skip this.)
    pub fn warm_up(&self, key: &PreparedKey) -> Result<(), ProveError> {
        let backend = self.backend;
        if backend.info().kind == BackendKind::Cpu {
            return Ok(());
        }
        let shape = key.shape;
        let values = g16_backend::sample::witness_like_scalars(shape.domain_size.max(shape.num_variables), 1);
        let mut staged = Staged {
            a: backend.upload_scalars(&values[..shape.domain_size])?,
            bc: Some((
                backend.upload_scalars(&values[..shape.domain_size])?,
                backend.upload_scalars(&values[..shape.domain_size])?,
            )),
            z: backend.upload_scalars(&values[..shape.num_variables])?,
            num_instance: shape.num_instance,
            num_variables: shape.num_variables,
            domain_size: shape.domain_size,
        };
        // No spans of its own: its device spans nest under the caller's current span (the
        // engine's `prepare_key`).
        self.compute(key, &mut staged, Fr::from(1u64), &Timeline::disabled())?;
        drop(staged);
        backend.synchronize()?;
        Ok(())
    }

    /// Synthesizes and proves, with a fresh (r, s) drawn from `rng`.
    pub fn prove<C: ConstraintSynthesizer<Fr>, R: RngCore + CryptoRng + ?Sized>(
        &self,
        key: &PreparedKey,
        circuit: C,
        rng: &mut R,
        tl: &Timeline,
    ) -> Result<Proof, ProveError> {
        self.prove_with(key, circuit, Randomness::draw(rng), tl)
    }

    /// Synthesizes and proves with the randomness given ([`Randomness`] says when a fixed
    /// pair is right: tests and bit-exact checks).
    pub fn prove_with<C: ConstraintSynthesizer<Fr>>(
        &self,
        key: &PreparedKey,
        circuit: C,
        randomness: Randomness,
        tl: &Timeline,
    ) -> Result<Proof, ProveError> {
        let _prove = tl.span(Layer::Prover, "prove");
        let syn = {
            let _g = tl.span(Layer::Prover, "SYNTH");
            synthesize(circuit)?
        };
        self.prove_synthesized(key, &syn, randomness, tl)
    }

    /// Steps 2–5 for an instance synthesized already (the engine synthesizes on other threads).
    ///
    /// The same as [`Prover::stage`], [`Prover::compute`], [`Prover::release`] and
    /// [`assemble`] in a row, which is how the engine runs them, under its locks.
    pub fn prove_synthesized(
        &self,
        key: &PreparedKey,
        syn: &Synthesized,
        randomness: Randomness,
        tl: &Timeline,
    ) -> Result<Proof, ProveError> {
        let (r, s) = (randomness.r(), randomness.s());
        let _device = tl.span(Layer::Prover, "device");
        let result = (|| {
            let mut staged = self.stage(key, syn, tl)?;
            let sums = self.compute(key, &mut staged, r, tl)?;
            self.release(staged, tl);
            Ok(assemble(key, &sums, r, s, tl))
        })();
        // Device spans are drained even when a step failed, so the timeline shows how far it got.
        tl.record_device_spans(&self.backend.drain_device_spans());
        result
    }

    /// Step 2, staging: checks the key against the instance and uploads a, b, c and the
    /// assignment. The host copy (`syn`) is no longer needed afterwards.
    pub fn stage(&self, key: &PreparedKey, syn: &Synthesized, tl: &Timeline) -> Result<Staged, ProveError> {
        check_key_matches(key, syn, self.backend)?;
        let backend = self.backend;
        let _g = tl.span(Layer::Prover, "stage");
        // One span per vector, so the report splits staging's time between them (and, under
        // each, the backend's device span for the copies).
        let upload = |name: &str, v: &[Fr]| {
            let _g = tl.span(Layer::Prover, name);
            backend.upload_scalars(v)
        };
        Ok(Staged {
            a: upload("upload_a", &syn.a)?,
            bc: Some((upload("upload_b", &syn.b)?, upload("upload_c", &syn.c)?)),
            z: upload("upload_z", &syn.assignment)?,
            num_instance: syn.num_instance,
            num_variables: syn.num_variables(),
            domain_size: syn.domain_size(),
        })
    }

    /// Steps 3–4 on the device: H (into `a`'s buffer; b and c are freed as soon as it is
    /// formed), then the MSMs against the resident bases, whose sums come back to the host.
    /// `r` is needed only to skip B in G1 when it is zero (as arkworks does).
    pub fn compute(&self, key: &PreparedKey, staged: &mut Staged, r: Fr, tl: &Timeline) -> Result<MsmSums, ProveError> {
        let backend = self.backend;
        let (b, c) = staged.bc.take().ok_or_else(|| ProveError::Internal("staged inputs computed twice".into()))?;
        // Step 3: H, which never leaves the device.
        let h = self.quotient_h(&mut staged.a, b, c, staged.domain_size, key.shape.qap, tl)?;
        staged.a = h;

        // Step 4: the MSMs against the resident bases.
        let (z, n) = (&staged.z, staged.num_variables);
        let all = Scalars::Device(z, 0..n);
        let msm_g1 = |name: &str, bases, scalars| -> Result<G1Projective, ProveError> {
            let _g = tl.span(Layer::Prover, name);
            Ok(backend.msm_g1(bases, scalars)?)
        };
        let a = msm_g1("msm_g1_a", &key.a, all.clone())?;
        // B in G1 only feeds r·B₁ in C; with r = 0 it is not needed (as in arkworks).
        let b_g1 = if r.is_zero() { G1Projective::zero() } else { msm_g1("msm_g1_b", &key.b_g1, all.clone())? };
        let b_g2: G2Projective = {
            let _g = tl.span(Layer::Prover, "msm_g2_b");
            backend.msm_g2(&key.b_g2, all)?
        };
        let l = msm_g1("msm_g1_l", &key.l, Scalars::Device(z, staged.num_instance..n))?;
        let h = msm_g1("msm_g1_h", &key.h, Scalars::Device(&staged.a, 0..key.h.len()))?;
        Ok(MsmSums { a, b_g1, b_g2, l, h })
    }

    /// The end of the device section ("readback"): frees the partition's buffers. Nothing
    /// is left to wait for: the MSM sums came back as host values, so every kernel that
    /// used the buffers has finished.
    pub fn release(&self, staged: Staged, tl: &Timeline) {
        let _g = tl.span(Layer::Prover, "readback");
        drop(staged);
    }

    /// H on the device, as `qap` wants it:
    /// - libsnark: `(a·b − c)/Z_H` as coefficients — each of a, b, c from evaluations on H to
    ///   evaluations on the coset gH (inverse NTT, then coset NTT), the quotient pointwise there
    ///   (Z_H is the constant gⁿ − 1 on the coset), then back to coefficients;
    /// - snarkjs: `a·b − c` as its n evaluations on the odd 2n-th roots ω₂ₙ·H, which the key's
    ///   H points take directly (they absorb Z_H, the constant −2 there).
    fn quotient_h(
        &self,
        a: &mut ScalarBuffer,
        mut b: ScalarBuffer,
        mut c: ScalarBuffer,
        domain_size: usize,
        qap: Qap,
        tl: &Timeline,
    ) -> Result<ScalarBuffer, ProveError> {
        let backend = self.backend;
        let _h = tl.span(Layer::Prover, "h");
        let (coset, z_inv) = match qap {
            Qap::Libsnark => (
                NttKind::CosetForward,
                vanishing_inverse_on_coset(domain_size).ok_or_else(|| {
                    ProveError::Internal(format!("no vanishing inverse for a domain of {domain_size}"))
                })?,
            ),
            Qap::Snarkjs => (NttKind::OddCosetForward, Fr::from(1u64)),
        };
        for (name, buf) in [("a", &mut *a), ("b", &mut b), ("c", &mut c)] {
            {
                let _g = tl.span(Layer::Prover, format!("ntt_inverse_{name}"));
                backend.ntt(buf, NttKind::Inverse)?;
            }
            let _g = tl.span(Layer::Prover, format!("ntt_coset_{name}"));
            backend.ntt(buf, coset)?;
        }
        {
            let _g = tl.span(Layer::Prover, "h_combine");
            backend.quotient(a, &b, &c, z_inv)?;
        }
        drop((b, c));
        if qap == Qap::Libsnark {
            let _g = tl.span(Layer::Prover, "ntt_coset_inverse_h");
            backend.ntt(a, NttKind::CosetInverse)?;
        }
        // Hand the buffer over without a copy: the caller's `a` becomes an empty placeholder.
        Ok(std::mem::replace(a, backend.alloc_scalars(0)?))
    }

    /// Uploads a compiled circuit's matrices once; reuse the result for every assignment
    /// proven on this backend. On a GPU backend the products and the R1CS check then run once
    /// on made-up values, for the reason [`Prover::warm_up`] gives (on an H200 a first wgpu
    /// proof at 2^22 took 1.13 s against 0.61 s steady while only the key was warmed up).
    pub fn prepare_circuit(&self, circuit: &CompiledCircuit) -> Result<PreparedCircuit, ProveError> {
        let prepared = self.prepare_circuit_for_one_proof(circuit)?;
        if self.backend.info().kind != BackendKind::Cpu {
            self.warm_up_circuit(&prepared)?;
        }
        Ok(prepared)
    }

    /// Uploads a compiled circuit's matrices without the warm-up, for the reason
    /// [`Prover::prepare_for_one_proof`] gives: a process that proves one assignment would
    /// spend on made-up values what its own proof then spends again.
    pub fn prepare_circuit_for_one_proof(&self, circuit: &CompiledCircuit) -> Result<PreparedCircuit, ProveError> {
        PreparedCircuit::new(self.backend, circuit)
    }

    /// A, B, C times a made-up z, the R1CS check and a∘b, their results thrown away.
    fn warm_up_circuit(&self, circuit: &PreparedCircuit) -> Result<(), ProveError> {
        let backend = self.backend;
        let shape = circuit.shape;
        let z = backend.upload_scalars(&g16_backend::sample::witness_like_scalars(shape.num_variables, 2))?;
        let product = |m: &g16_backend::MatrixBuffer| -> Result<ScalarBuffer, ProveError> {
            let mut out = backend.alloc_scalars(shape.domain_size())?;
            backend.spmv(m, &z, &mut out)?;
            Ok(out)
        };
        let (a, b) = (product(&circuit.a)?, product(&circuit.b)?);
        let mut c = product(circuit.c.as_ref().unwrap_or(&circuit.a))?;
        backend.first_unsatisfied([&a, &b, &c], shape.num_constraints)?;
        backend.mul_assign(&mut c, &b)?;
        backend.synchronize()?;
        Ok(())
    }

    /// Proves an assignment z = [1, public inputs…, witness…] of a compiled circuit, with a
    /// fresh (r, s) drawn from `rng`. The key is checked against the circuit, and z against
    /// both, before any device work; an unsatisfied z fails on the device's R1CS check, before
    /// any MSM.
    pub fn prove_assignment<R: RngCore + CryptoRng + ?Sized>(
        &self,
        key: &PreparedKey,
        circuit: &PreparedCircuit,
        z: &[Fr],
        rng: &mut R,
        tl: &Timeline,
    ) -> Result<Proof, ProveError> {
        self.prove_assignment_with(key, circuit, z, Randomness::draw(rng), tl)
    }

    /// [`Prover::prove_assignment`] with the randomness given (tests and bit-exact checks).
    pub fn prove_assignment_with(
        &self,
        key: &PreparedKey,
        circuit: &PreparedCircuit,
        z: &[Fr],
        randomness: Randomness,
        tl: &Timeline,
    ) -> Result<Proof, ProveError> {
        let (r, s) = (randomness.r(), randomness.s());
        let _prove = tl.span(Layer::Prover, "prove");
        let _device = tl.span(Layer::Prover, "device");
        let result = (|| {
            let mut staged = self.stage_assignment(key, circuit, z, tl)?;
            let sums = self.compute(key, &mut staged, r, tl)?;
            self.release(staged, tl);
            Ok(assemble(key, &sums, r, s, tl))
        })();
        tl.record_device_spans(&self.backend.drain_device_spans());
        result
    }

    /// Step 2 for a compiled circuit: uploads z alone and computes a = A·z, b = B·z, c = C·z (or
    /// a∘b) on the device, where the R1CS check runs before anything else does.
    pub fn stage_assignment(
        &self,
        key: &PreparedKey,
        circuit: &PreparedCircuit,
        z: &[Fr],
        tl: &Timeline,
    ) -> Result<Staged, ProveError> {
        let backend = self.backend;
        if key.backend != backend.id() || circuit.backend != backend.id() {
            return Err(ProveError::KeyForAnotherBackend);
        }
        circuit.shape.check_key(&key.shape)?;
        circuit.shape.check_assignment(z)?;
        let _g = tl.span(Layer::Prover, "stage");
        let z_buf = {
            let _g = tl.span(Layer::Prover, "upload_z");
            backend.upload_scalars(z)?
        };
        let n = circuit.shape.domain_size();
        let product = |name: &str, m: &g16_backend::MatrixBuffer| -> Result<ScalarBuffer, ProveError> {
            let _g = tl.span(Layer::Prover, name);
            let mut out = backend.alloc_scalars(n)?;
            backend.spmv(m, &z_buf, &mut out)?;
            Ok(out)
        };
        let a = product("spmv_a", &circuit.a)?;
        let b = product("spmv_b", &circuit.b)?;
        let c = match &circuit.c {
            Some(m) => {
                let c = product("spmv_c", m)?;
                let _g = tl.span(Layer::Prover, "r1cs_check");
                if let Some(row) = backend.first_unsatisfied([&a, &b, &c], circuit.shape.num_constraints)? {
                    return Err(ProveError::Unsatisfied { row });
                }
                c
            }
            // c = a∘b: satisfied by construction, so an unsatisfied witness shows only in the
            // proof's verification (a snarkjs key carries no C to check against).
            None => {
                let mut c = product("spmv_c", &circuit.a)?;
                let _g = tl.span(Layer::Prover, "c_from_ab");
                backend.mul_assign(&mut c, &b)?;
                c
            }
        };
        Ok(Staged {
            a,
            bc: Some((b, c)),
            z: z_buf,
            num_instance: circuit.shape.num_instance,
            num_variables: circuit.shape.num_variables,
            domain_size: n,
        })
    }
}

/// Step 5, on the CPU: A = α + A_msm + rδ, B = β + B_msm + sδ, C = s·A + r·B₁ − rsδ + L + H.
pub fn assemble(key: &PreparedKey, sums: &MsmSums, r: Fr, s: Fr, tl: &Timeline) -> Proof {
    let _g = tl.span(Layer::Prover, "assemble");
    let vk = &key.vk;
    let g_a = vk.alpha_g1.into_group() + sums.a + key.delta_g1 * r;
    let g1_b = key.beta_g1.into_group() + sums.b_g1 + key.delta_g1 * s;
    let g_b = vk.beta_g2.into_group() + sums.b_g2 + vk.delta_g2 * s;
    let g_c = g_a * s + g1_b * r - key.delta_g1 * (r * s) + sums.l + sums.h;
    Proof { a: g_a.into_affine(), b: g_b.into_affine(), c: g_c.into_affine() }
}

/// The key's sizes must be the circuit's, or the proof would be garbage.
fn check_key_matches<B: Backend + ?Sized>(key: &PreparedKey, syn: &Synthesized, backend: &B) -> Result<(), ProveError> {
    if key.backend != backend.id() {
        return Err(ProveError::KeyForAnotherBackend);
    }
    let checks = [
        ("instance variables", key.shape.num_instance, syn.num_instance),
        ("variables", key.shape.num_variables, syn.num_variables()),
        ("domain size", key.shape.domain_size, syn.domain_size()),
    ];
    for (what, key, circuit) in checks {
        if key != circuit {
            return Err(ShapeMismatch::Key { what, key, circuit }.into());
        }
    }
    Ok(())
}

/// Verifies a proof with arkworks' verifier, checking the number of public inputs first
/// (arkworks' verifier would silently ignore extra ones).
pub fn verify(key: &PreparedKey, proof: &Proof, public_inputs: &[Fr]) -> Result<bool, ProveError> {
    let expected = key.vk.gamma_abc_g1.len() - 1;
    if public_inputs.len() != expected {
        return Err(ProveError::PublicInputCount { expected, got: public_inputs.len() });
    }
    ark_groth16::Groth16::<crate::curve::Curve>::verify_proof(&key.pvk, proof, public_inputs)
        .map_err(|e| ProveError::Verify(e.to_string()))
}
