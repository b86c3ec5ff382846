//! A proving key on one backend: its bases uploaded once and resident.

use ark_groth16::PreparedVerifyingKey;

use super::key::{CheckedKey, KeyShape};
use super::memory::{DoesNotFit, MemoryPlan};
use super::ProveError;
use crate::compiled::{CircuitShape, CompiledCircuit};
use crate::curve::{G1Affine, G2Affine, VerifyingKey};
use g16_backend::{Backend, BackendError, BackendId, BackendKind, Element, G1Bases, G2Bases, MatrixBuffer};

/// A proving key prepared for one backend: its bases uploaded once and resident, reused by
/// every proof made with that backend. Made by [`crate::prover::Prover::prepare`] from a
/// [`CheckedKey`]; its parts are the prover's alone.
pub struct PreparedKey {
    pub(super) vk: VerifyingKey,
    pub(super) pvk: PreparedVerifyingKey<crate::curve::Curve>,
    pub(super) shape: KeyShape,
    pub(super) beta_g1: G1Affine,
    pub(super) delta_g1: G1Affine,
    /// All of a_query (the constant's point included: its scalar is z₀ = 1).
    pub(super) a: G1Bases,
    pub(super) b_g1: G1Bases,
    pub(super) b_g2: G2Bases,
    pub(super) l: G1Bases,
    pub(super) h: G1Bases,
    pub(super) backend: BackendId,
}

impl PreparedKey {
    /// Uploads the bases of `key` to `backend`: H first, then A, B and L in G1, then B in G2.
    /// A GPU backend gives a vector shifted bases at upload only while they take at most half
    /// its free memory, so where not every vector can have them the first ones do: H's scalars
    /// (the quotient's coefficients) are dense in every proof, while A's, B's and L's are often
    /// mostly zeros and ones (95–99 % in a Filecoin PoRep partition), which the MSM's 0/1 split
    /// keeps out of the buckets. G2 comes last: its tables take twice a G1 table's memory.
    /// (`setup::generate_prepared` makes its resident bases in the same order.)
    ///
    /// Returns once the device has finished with them: a GPU backend queues work on the bases
    /// (shifted multiples, seconds at 2^22), and a first proof must not count that work as
    /// its own (an H200 trace once showed 2.6 s of it inside a first proof's `ntt_inverse_a`).
    pub(super) fn new<B: Backend + ?Sized>(backend: &B, key: &CheckedKey) -> Result<PreparedKey, ProveError> {
        let (pk, shape) = (key.proving_key(), key.shape());
        Self::check_fits(backend, &shape)?;
        let key = PreparedKey {
            vk: pk.vk.clone(),
            pvk: ark_groth16::prepare_verifying_key(&pk.vk),
            shape,
            beta_g1: pk.beta_g1,
            delta_g1: pk.delta_g1,
            // In the order above: the fields are evaluated as written.
            h: backend.upload_g1_bases(&pk.h_query)?,
            a: backend.upload_g1_bases(&pk.a_query)?,
            b_g1: backend.upload_g1_bases(&pk.b_g1_query)?,
            l: backend.upload_g1_bases(&pk.l_query)?,
            b_g2: backend.upload_g2_bases(&pk.b_g2_query)?,
            backend: backend.id(),
        };
        backend.synchronize()?;
        Ok(key)
    }

    /// A key whose bases were made on `backend` and never held whole on the host
    /// (`setup::generate_prepared`); returns once the device has finished with them, as
    /// [`PreparedKey::new`] does.
    pub(super) fn from_resident<B: Backend + ?Sized>(
        backend: &B,
        vk: VerifyingKey,
        shape: KeyShape,
        parts: ResidentParts,
    ) -> Result<PreparedKey, BackendError> {
        let ResidentParts { beta_g1, delta_g1, a, b_g1, b_g2, l, h } = parts;
        let pvk = ark_groth16::prepare_verifying_key(&vk);
        backend.synchronize()?;
        Ok(PreparedKey { vk, pvk, shape, beta_g1, delta_g1, a, b_g1, b_g2, l, h, backend: backend.id() })
    }

    /// Refuses, with the plan, a key of `shape` that cannot fit a GPU backend's memory (the
    /// CPU backend's is the host's, which the key already occupies).
    pub(super) fn check_fits<B: Backend + ?Sized>(backend: &B, shape: &KeyShape) -> Result<(), DoesNotFit> {
        check_fits(backend, &MemoryPlan::new(shape, None))
    }
}

/// What a proving key holds besides its verifying key, made resident on one backend.
pub(super) struct ResidentParts {
    pub beta_g1: G1Affine,
    pub delta_g1: G1Affine,
    pub a: G1Bases,
    pub b_g1: G1Bases,
    pub b_g2: G2Bases,
    pub l: G1Bases,
    pub h: G1Bases,
}

impl PreparedKey {
    pub fn verifying_key(&self) -> &VerifyingKey {
        &self.vk
    }

    pub fn shape(&self) -> KeyShape {
        self.shape
    }

    /// The backend instance the bases were uploaded to.
    pub fn backend_id(&self) -> BackendId {
        self.backend
    }

    /// Public inputs a proof with this key takes (without the constant 1).
    pub fn num_public_inputs(&self) -> usize {
        self.shape.num_instance - 1
    }

    /// Device memory the resident bases take (as host-sized elements).
    pub fn resident_bytes(&self) -> u64 {
        let g1 = (self.a.len() + self.b_g1.len() + self.l.len() + self.h.len()) as u64;
        g1 * G1Affine::HOST_BYTES as u64 + self.b_g2.len() as u64 * G2Affine::HOST_BYTES as u64
    }
}

/// Refuses, with the plan, what cannot fit a GPU backend's memory (the CPU backend's is the
/// host's, which the key already occupies).
fn check_fits<B: Backend + ?Sized>(backend: &B, plan: &MemoryPlan) -> Result<(), DoesNotFit> {
    let info = backend.info();
    match info.memory_bytes {
        Some(capacity) if info.kind != BackendKind::Cpu => plan.check(&info.device, capacity),
        _ => Ok(()),
    }
}

/// A compiled circuit on one backend: its matrices uploaded once and resident, reused by every
/// assignment proven there. Made by [`crate::prover::Prover::prepare_circuit`].
pub struct PreparedCircuit {
    pub(super) shape: CircuitShape,
    pub(super) a: MatrixBuffer,
    pub(super) b: MatrixBuffer,
    pub(super) c: Option<MatrixBuffer>,
    pub(super) backend: BackendId,
}

impl PreparedCircuit {
    pub(super) fn new<B: Backend + ?Sized>(
        backend: &B,
        circuit: &CompiledCircuit,
    ) -> Result<PreparedCircuit, ProveError> {
        // Planned with its key (of the same shape), which is resident beside it.
        let shape = circuit.shape();
        let key_shape = KeyShape {
            num_instance: shape.num_instance,
            num_variables: shape.num_variables,
            domain_size: shape.domain_size(),
            qap: shape.qap,
        };
        check_fits(backend, &MemoryPlan::new(&key_shape, Some(circuit.matrix_size())))?;
        let (a, b, c) = circuit.matrices();
        let prepared = PreparedCircuit {
            shape: circuit.shape(),
            a: backend.upload_matrix(a)?,
            b: backend.upload_matrix(b)?,
            c: c.map(|c| backend.upload_matrix(c)).transpose()?,
            backend: backend.id(),
        };
        backend.synchronize()?;
        Ok(prepared)
    }

    pub fn shape(&self) -> CircuitShape {
        self.shape
    }
}
