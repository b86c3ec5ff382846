//! Groth16 key generation (circuit-specific setup, libsnark reduction) with the scalar
//! multiplications on a backend: the same key, byte for byte, as arkworks'
//! `Groth16::<Bls12_381, LibsnarkReduction>::generate_random_parameters_with_reduction` for the
//! same circuit and the same rng state.
//!
//! What makes the bytes equal: the rng is drawn from in arkworks' order (α, β, γ, δ, the G1
//! and G2 generators, then τ — `sample_element_outside_domain` of the same domain), the host's
//! field work computes the same field elements (the QAP's columns at τ, from the compiled
//! matrices, which are the constraint system arkworks synthesizes), and every group element
//! has one canonical affine form, so s·P is the same point however a backend computes it.
//!
//! The host does what is linear in the circuit and cheap per element: Lagrange values at τ,
//! the transposed matrix products, the powers of τ; the backend does the ~5n G1 and n G2
//! fixed-base multiplications that are almost all of arkworks' setup time.

use ark_ec::CurveGroup;
use ark_ff::{Field, UniformRand, Zero};
use ark_poly::{EvaluationDomain, GeneralEvaluationDomain};
use ark_relations::gr1cs::ConstraintSynthesizer;
use rand::{CryptoRng, RngCore};
use rayon::prelude::*;

use super::key::{CheckedKey, KeyError, KeyShape, Qap};
use super::prepared::{PreparedKey, ResidentParts};
use crate::compiled::{compile, CompileError, CompiledCircuit};
use crate::curve::{Fr, G1Affine, G1Projective, G2Projective, ProvingKey, VerifyingKey};
use crate::timeline::{Layer, Timeline};
use g16_backend::{Backend, BackendError};

/// Why a key could not be generated.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Compile(#[from] CompileError),
    #[error("setup makes keys of the libsnark reduction from A, B and C; this circuit is {qap:?}'s{}",
        if *.has_c { "" } else { " without C" })]
    NotLibsnark { qap: Qap, has_c: bool },
    #[error("the QAP domain of {rows} rows is larger than Fr supports")]
    DomainTooLarge { rows: usize },
    #[error("setup's scalar multiplications failed: {0}")]
    Backend(#[from] BackendError),
    #[error(transparent)]
    Key(#[from] KeyError),
    /// A key to be made resident that the device cannot hold.
    #[error(transparent)]
    DoesNotFit(#[from] super::memory::DoesNotFit),
}

/// The toxic waste, drawn in arkworks' order.
struct Trapdoor {
    alpha: Fr,
    beta: Fr,
    gamma: Fr,
    delta: Fr,
    g1: G1Projective,
    g2: G2Projective,
}

impl Trapdoor {
    /// α, β, γ, δ, then the generators: `generate_random_parameters_with_reduction`'s draws.
    fn draw<R: RngCore + CryptoRng>(rng: &mut R) -> Trapdoor {
        let alpha = Fr::rand(rng);
        let beta = Fr::rand(rng);
        let gamma = Fr::rand(rng);
        let delta = Fr::rand(rng);
        let g1 = G1Projective::rand(rng);
        let g2 = G2Projective::rand(rng);
        Trapdoor { alpha, beta, gamma, delta, g1, g2 }
    }
}

/// A key for `circuit`, its scalar multiplications on `backend`: the key arkworks' setup
/// gives for the same circuit and rng state. The circuit is compiled here (synthesis in setup
/// mode, as arkworks' setup synthesizes it).
pub fn generate<C, R, B>(circuit: C, rng: &mut R, backend: &B, tl: &Timeline) -> Result<CheckedKey, SetupError>
where
    C: ConstraintSynthesizer<Fr>,
    R: RngCore + CryptoRng,
    B: Backend + ?Sized,
{
    // arkworks draws the trapdoor before it synthesizes; synthesis draws nothing.
    let trapdoor = Trapdoor::draw(rng);
    let compiled = {
        let _g = tl.span(Layer::Prover, "setup.compile");
        compile(circuit)?
    };
    with_trapdoor(&compiled, trapdoor, rng, backend, tl)
}

/// [`generate`] for a circuit compiled before (libsnark reduction, with C): the same key as
/// arkworks' setup of the circuit it was compiled from, for the same rng state.
pub fn generate_compiled<R, B>(
    compiled: &CompiledCircuit,
    rng: &mut R,
    backend: &B,
    tl: &Timeline,
) -> Result<CheckedKey, SetupError>
where
    R: RngCore + CryptoRng,
    B: Backend + ?Sized,
{
    let trapdoor = Trapdoor::draw(rng);
    with_trapdoor(compiled, trapdoor, rng, backend, tl)
}

/// The QAP's columns at τ: a, b, c (one value per variable), Z(τ), and the domain size.
struct QapAtTau {
    a: Vec<Fr>,
    b: Vec<Fr>,
    c: Vec<Fr>,
    zt: Fr,
    domain_size: usize,
}

/// LibsnarkReduction's `instance_map_with_evaluation`, from compiled matrices: u_r = L_r(τ) for
/// every row r of the domain, then a = Aᵀu (A holds the reduction's input rows, a_i = u at
/// row constraints + i), b = Bᵀu, c = Cᵀu.
fn evaluate_qap(compiled: &CompiledCircuit, domain: &GeneralEvaluationDomain<Fr>, t: Fr) -> QapAtTau {
    let zt = domain.evaluate_vanishing_polynomial(t);
    let u = domain.evaluate_all_lagrange_coefficients(t);
    let (ma, mb, mc) = compiled.matrices();
    let n = compiled.num_variables();
    let column = |m: Option<&g16_backend::SparseMatrix>| {
        let mut out = vec![Fr::zero(); n];
        if let Some(m) = m {
            m.mul_transpose_into(&u, &mut out);
        }
        out
    };
    let ((a, b), c) = rayon::join(|| rayon::join(|| column(Some(ma)), || column(Some(mb))), || column(mc));
    QapAtTau { a, b, c, zt, domain_size: domain.size() }
}

/// `zt·δ⁻¹·τ^i` for i < count: the H query's scalars (`h_query_scalars`), as stretches of
/// successive products, one power to start each.
fn h_scalars(count: usize, t: Fr, zt_over_delta: Fr) -> Vec<Fr> {
    const STRETCH: usize = 1 << 12;
    let mut out = vec![Fr::zero(); count];
    out.par_chunks_mut(STRETCH).enumerate().for_each(|(k, part)| {
        let mut x = zt_over_delta * t.pow([(k * STRETCH) as u64]);
        for v in part {
            *v = x;
            x *= t;
        }
    });
    out
}

/// What setup computes on the host before any scalar multiplication: the trapdoor, and the
/// scalars of each query (the G1 generator times them, and for B the G2 generator too).
struct QueryScalars {
    td: Trapdoor,
    a: Vec<Fr>,
    b: Vec<Fr>,
    h: Vec<Fr>,
    l: Vec<Fr>,
    gamma_abc: Vec<Fr>,
    shape: KeyShape,
}

impl QueryScalars {
    /// The QAP at τ and the queries' scalars from the trapdoor; `rng` gives τ next.
    fn new(
        compiled: &CompiledCircuit,
        td: Trapdoor,
        mut rng: &mut dyn RngCore,
        tl: &Timeline,
    ) -> Result<QueryScalars, SetupError> {
        let (_, _, c_matrix) = compiled.matrices();
        if compiled.qap() != Qap::Libsnark || c_matrix.is_none() {
            return Err(SetupError::NotLibsnark { qap: compiled.qap(), has_c: c_matrix.is_some() });
        }
        let rows = compiled.num_constraints() + compiled.num_instance();
        let domain = GeneralEvaluationDomain::<Fr>::new(rows).ok_or(SetupError::DomainTooLarge { rows })?;
        let t = domain.sample_element_outside_domain(&mut rng);
        let num_instance = compiled.num_instance();

        let _host = tl.span(Layer::Prover, "setup.qap");
        let qap = evaluate_qap(compiled, &domain, t);
        // Invertible: α..δ are uniform in Fr; arkworks unwraps the same inverses.
        let gamma_inverse = td.gamma.inverse().unwrap_or_default();
        let delta_inverse = td.delta.inverse().unwrap_or_default();
        let (alpha, beta) = (td.alpha, td.beta);
        let combined = |range: std::ops::Range<usize>, inverse: Fr| -> Vec<Fr> {
            qap.a[range.clone()]
                .par_iter()
                .zip(&qap.b[range.clone()])
                .zip(&qap.c[range])
                .map(|((a, b), c)| (beta * a + alpha * b + c) * inverse)
                .collect()
        };
        let gamma_abc = combined(0..num_instance, gamma_inverse);
        let l = combined(num_instance..qap.a.len(), delta_inverse);
        let h = h_scalars(qap.domain_size - 1, t, qap.zt * delta_inverse);
        let shape = KeyShape {
            num_instance,
            num_variables: compiled.num_variables(),
            domain_size: qap.domain_size,
            qap: Qap::Libsnark,
        };
        Ok(QueryScalars { td, a: qap.a, b: qap.b, h, l, gamma_abc, shape })
    }
}

impl Trapdoor {
    /// The verifying key, from the public inputs' points (`gamma_abc_g1`).
    fn verifying_key(&self, gamma_abc_g1: Vec<G1Affine>) -> VerifyingKey {
        let td = self;
        VerifyingKey {
            alpha_g1: (td.g1 * td.alpha).into_affine(),
            beta_g2: (td.g2 * td.beta).into_affine(),
            gamma_g2: (td.g2 * td.gamma).into_affine(),
            delta_g2: (td.g2 * td.delta).into_affine(),
            gamma_abc_g1,
        }
    }
}

/// The key from the trapdoor; `rng` gives τ next.
fn with_trapdoor<B: Backend + ?Sized>(
    compiled: &CompiledCircuit,
    td: Trapdoor,
    rng: &mut dyn RngCore,
    backend: &B,
    tl: &Timeline,
) -> Result<CheckedKey, SetupError> {
    let q = QueryScalars::new(compiled, td, rng, tl)?;
    let b_g2_query = {
        let _g = tl.span(Layer::Prover, "setup.fixed_base_g2");
        one(backend.fixed_base_g2(q.td.g2, &[&q.b])?)
    };
    let [a_query, b_g1_query, h_query, l_query, gamma_abc_g1]: [Vec<G1Affine>; 5] = {
        let _g = tl.span(Layer::Prover, "setup.fixed_base_g1");
        let out = backend.fixed_base_g1(q.td.g1, &[&q.a, &q.b, &q.h, &q.l, &q.gamma_abc])?;
        out.try_into().map_err(|v: Vec<_>| batches_error(v.len(), 5))?
    };
    let td = &q.td;
    let pk = ProvingKey {
        vk: td.verifying_key(gamma_abc_g1),
        beta_g1: (td.g1 * td.beta).into_affine(),
        delta_g1: (td.g1 * td.delta).into_affine(),
        a_query,
        b_g1_query,
        b_g2_query,
        h_query,
        l_query,
    };
    let shape = KeyShape::of(&pk)?;
    if shape != q.shape {
        return Err(KeyError::Inconsistent(format!(
            "the backend's queries make a key of {} variables and domain {}, the circuit has {} and {}",
            shape.num_variables, shape.domain_size, q.shape.num_variables, q.shape.domain_size
        ))
        .into());
    }
    Ok(CheckedKey::from_setup(pk, shape))
}

/// [`generate_compiled`] with each query's points going from the backend's fixed-base
/// multiplication straight into its resident bases, one query at a time: the key that
/// [`crate::prover::Prover::prepare`] would make of `generate_compiled`'s for the same rng
/// state, while the host holds one query's points at most, never the whole proving key (a
/// 2^27 key is ~83 GB of arkworks points, most of a 128 GiB host). Nothing is stored, and the
/// key gets no warm-up proof (`Prover::warm_up` makes one).
pub fn generate_prepared<R, B>(
    compiled: &CompiledCircuit,
    rng: &mut R,
    backend: &B,
    tl: &Timeline,
) -> Result<PreparedKey, SetupError>
where
    R: RngCore + CryptoRng,
    B: Backend + ?Sized,
{
    let trapdoor = Trapdoor::draw(rng);
    let QueryScalars { td, a, b, h, l, gamma_abc, shape } = QueryScalars::new(compiled, trapdoor, rng, tl)?;
    PreparedKey::check_fits(backend, &shape)?;
    let _g = tl.span(Layer::Prover, "setup.fixed_base_resident");
    let (g1, g2) = (td.g1, td.g2);
    // Each query's scalars are dropped with its points, once the bases are on the device.
    let g1_bases = |scalars: Vec<Fr>| -> Result<g16_backend::G1Bases, SetupError> {
        let points = one(backend.fixed_base_g1(g1, &[&scalars])?);
        drop(scalars);
        Ok(backend.upload_g1_bases(&points)?)
    };
    let gamma_abc_g1 = one(backend.fixed_base_g1(g1, &[&gamma_abc])?);
    // H first, as `PreparedKey::new` uploads a key (why: there).
    let h = g1_bases(h)?;
    let a = g1_bases(a)?;
    let b_g1 = backend.upload_g1_bases(&one(backend.fixed_base_g1(g1, &[&b])?))?;
    let l = g1_bases(l)?;
    let b_g2 = backend.upload_g2_bases(&one(backend.fixed_base_g2(g2, &[&b])?))?;
    drop(b);
    let vk = td.verifying_key(gamma_abc_g1);
    let lengths = [a.len(), b_g1.len(), b_g2.len(), h.len() + 1, l.len() + shape.num_instance, vk.gamma_abc_g1.len()];
    let want = [shape.num_variables, shape.num_variables, shape.num_variables, shape.domain_size, shape.num_variables];
    if lengths[..5] != want || lengths[5] != shape.num_instance {
        return Err(KeyError::Inconsistent(format!(
            "the backend's queries have {lengths:?} points (A, B in G1 and G2, H + 1, L + inputs, the inputs'), \
             the circuit wants {want:?} and {}",
            shape.num_instance
        ))
        .into());
    }
    let parts = ResidentParts {
        beta_g1: (td.g1 * td.beta).into_affine(),
        delta_g1: (td.g1 * td.delta).into_affine(),
        a,
        b_g1,
        b_g2,
        l,
        h,
    };
    Ok(PreparedKey::from_resident(backend, vk, shape, parts)?)
}

fn batches_error(got: usize, want: usize) -> SetupError {
    BackendError::Device(format!("fixed_base_g1 returned {got} batches for {want}")).into()
}

/// The one batch of a one-batch call.
fn one<T>(mut batches: Vec<Vec<T>>) -> Vec<T> {
    batches.pop().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuits::{BuiltinCircuit, CircuitKind};
    use g16_backend::CpuBackend;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    fn arkworks(circuit: BuiltinCircuit, seed: u64) -> CheckedKey {
        CheckedKey::generate(circuit, &mut ChaCha20Rng::seed_from_u64(seed)).unwrap()
    }

    #[test]
    fn keys_on_the_cpu_backend_are_arkworks_keys() {
        let cpu = CpuBackend::new();
        for (kind, size, seed) in [(CircuitKind::Synthetic, 6, 1), (CircuitKind::Poseidon, 9, 2)] {
            let circuit = BuiltinCircuit::new(kind, size, 5).unwrap();
            let want = arkworks(circuit.clone(), seed);
            let from_circuit =
                generate(circuit.clone(), &mut ChaCha20Rng::seed_from_u64(seed), &cpu, &Timeline::disabled()).unwrap();
            assert!(from_circuit == want, "{kind}: generate");
            // From a circuit compiled before: the rng state is all that matters.
            let compiled = compile(circuit).unwrap();
            let from_compiled =
                generate_compiled(&compiled, &mut ChaCha20Rng::seed_from_u64(seed), &cpu, &Timeline::disabled())
                    .unwrap();
            assert_eq!(from_compiled.to_bytes(true).unwrap(), want.to_bytes(true).unwrap(), "{kind}: compiled");
        }
    }

    #[test]
    fn the_h_scalars_are_powers_of_tau() {
        let t = Fr::from(3u64);
        let k = Fr::from(5u64);
        let h = h_scalars(10_000, t, k);
        assert_eq!(h[0], k);
        assert_eq!(h[4097], k * t.pow([4097u64]));
        assert_eq!(h[9_999], k * t.pow([9_999u64]));
    }

    #[test]
    fn a_circuit_without_c_is_refused() {
        let compiled = compile(BuiltinCircuit::new(CircuitKind::Synthetic, 4, 0).unwrap()).unwrap();
        let (a, b, _) = compiled.matrices();
        let snarkjs = CompiledCircuit::with_input_rows(
            compiled.num_instance(),
            compiled.num_constraints(),
            a.clone(),
            b.clone(),
            None,
            Qap::Snarkjs,
        )
        .unwrap();
        let err =
            generate_compiled(&snarkjs, &mut ChaCha20Rng::seed_from_u64(0), &CpuBackend::new(), &Timeline::disabled())
                .unwrap_err();
        assert!(matches!(err, SetupError::NotLibsnark { qap: Qap::Snarkjs, has_c: false }), "{err}");
    }
}
