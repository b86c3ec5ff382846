//! Keys resident on a device: each circuit's proving key (and compiled circuit) prepared once on
//! a device and kept there across jobs, within a memory budget, the least recently used evicted
//! first.
//!
//! A device of the engine holds at most one *pinned* key (the one it was started with, for
//! jobs that name none) and any number of named ones, which jobs bring as a [`CircuitKey`]. A
//! named key is prepared by the first device worker that needs it on its device; an evicted
//! key's device memory is freed once the last partition using it lets go.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use g16_backend::{Backend, Element};
use crate::compiled::CompiledCircuit;
use crate::prover::{CheckedKey, KeyShape, PreparedCircuit, PreparedKey, ProveError, Prover};
use crate::curve::{Fr, G1Affine, G2Affine};

/// A circuit as jobs name it: a proving key, and the compiled circuit where partitions come as
/// assignments. Checked against each other when made.
pub struct CircuitKey {
    name: String,
    key: CheckedKey,
    circuit: Option<CompiledCircuit>,
}

impl CircuitKey {
    pub fn new(name: impl Into<String>, key: CheckedKey, circuit: Option<CompiledCircuit>) -> Result<Self, ProveError> {
        if let Some(circuit) = &circuit {
            circuit.check_key(&key.shape())?;
        }
        Ok(CircuitKey { name: name.into(), key, circuit })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn key(&self) -> &CheckedKey {
        &self.key
    }

    pub fn circuit(&self) -> Option<&CompiledCircuit> {
        self.circuit.as_ref()
    }

    pub fn shape(&self) -> KeyShape {
        self.key.shape()
    }

    /// Device memory the prepared key and circuit take (host-sized elements, as the budget
    /// counts them), known before preparing.
    pub fn device_bytes(&self) -> u64 {
        let pk = self.key.proving_key();
        let g1 = pk.a_query.len() + pk.b_g1_query.len() + pk.l_query.len() + pk.h_query.len();
        let mut bytes =
            g1 as u64 * G1Affine::HOST_BYTES as u64 + pk.b_g2_query.len() as u64 * G2Affine::HOST_BYTES as u64;
        if let Some(circuit) = &self.circuit {
            let (a, b, c) = circuit.matrices();
            for m in [Some(a), Some(b), c].into_iter().flatten() {
                // Coefficients, column indices, row offsets.
                bytes += (m.entries() * (Fr::HOST_BYTES + 4) + (m.rows() + 1) * 4) as u64;
            }
        }
        bytes
    }
}

/// A key prepared on one device.
pub struct ResidentKey {
    pub name: String,
    pub key: PreparedKey,
    pub circuit: Option<PreparedCircuit>,
    pub bytes: u64,
}

/// How a key is made ready on a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyPreparation {
    /// Its bases uploaded and one proof's device work run, so that the first proof costs what
    /// the others do ([`Prover::prepare`]).
    WarmUp,
    /// Its bases (and its circuit's matrices) uploaded only: for a process that makes one proof with the key, where the
    /// warm-up would cost about what the proof it speeds up costs (at 2^24 on an H200 it
    /// took ~1 s of `prepare_key`'s 1.9 s, the proof 0.8 s).
    OneProof,
}

impl ResidentKey {
    /// Prepares `key` (and `circuit`) on `backend`; `bytes` is what the budget counts for it.
    pub(crate) fn prepare<B: Backend>(
        backend: &B,
        name: &str,
        key: &CheckedKey,
        circuit: Option<&CompiledCircuit>,
        how: KeyPreparation,
    ) -> Result<Self, ProveError> {
        let prover = Prover::new(backend);
        let (prepared, circuit) = match how {
            KeyPreparation::WarmUp => (prover.prepare(key)?, circuit.map(|c| prover.prepare_circuit(c)).transpose()?),
            KeyPreparation::OneProof => (
                prover.prepare_for_one_proof(key)?,
                circuit.map(|c| prover.prepare_circuit_for_one_proof(c)).transpose()?,
            ),
        };
        let bytes = prepared.resident_bytes();
        Ok(ResidentKey { name: name.to_string(), key: prepared, circuit, bytes })
    }
}

struct Entry {
    key: Arc<ResidentKey>,
    last_used: u64,
}

/// Whether making room for a key may evict others.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Room {
    EvictLeastRecent,
    FreeOnly,
}

/// The named keys one device holds.
pub(crate) struct ResidentSet {
    /// Bytes the named keys may take on the device (`None`: no limit).
    budget: Option<u64>,
    inner: Mutex<Inner>,
}

struct Inner {
    entries: Vec<Entry>,
    clock: u64,
}

impl ResidentSet {
    pub fn new(budget: Option<u64>) -> Self {
        ResidentSet { budget, inner: Mutex::new(Inner { entries: Vec::new(), clock: 0 }) }
    }

    /// The map is rebuilt whole under the lock; a panic elsewhere cannot leave it torn.
    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The key named as `circuit` is, prepared on `backend` if it is not resident yet, after
    /// evicting the least recently used keys its bytes need. Preparing holds the set's lock,
    /// so two workers never prepare one key twice.
    pub fn get_or_prepare<B: Backend>(
        &self,
        backend: &B,
        circuit: &CircuitKey,
    ) -> Result<Arc<ResidentKey>, ProveError> {
        let key = self.obtain(backend, circuit, Room::EvictLeastRecent)?;
        Ok(key.expect("evicting makes room for any key within the budget"))
    }

    /// Prepares the key named as `circuit` only where the budget has room for it beside the
    /// resident keys: `false` (and nothing evicted) where it has not. For keys no job has asked
    /// for yet (a circuit just registered), which must not push out keys in use.
    pub fn prepare_into_free_room<B: Backend>(&self, backend: &B, circuit: &CircuitKey) -> Result<bool, ProveError> {
        Ok(self.obtain(backend, circuit, Room::FreeOnly)?.is_some())
    }

    fn obtain<B: Backend>(
        &self,
        backend: &B,
        circuit: &CircuitKey,
        room: Room,
    ) -> Result<Option<Arc<ResidentKey>>, ProveError> {
        let mut inner = self.inner();
        inner.clock += 1;
        let now = inner.clock;
        if let Some(entry) = inner.entries.iter_mut().find(|e| e.key.name == circuit.name) {
            entry.last_used = now;
            return Ok(Some(Arc::clone(&entry.key)));
        }
        let need = circuit.device_bytes();
        if let Some(budget) = self.budget {
            if need > budget {
                return Err(ProveError::Internal(format!(
                    "circuit '{}' needs {need} bytes of device memory, more than the resident budget of {budget}",
                    circuit.name
                )));
            }
            let held = |inner: &Inner| inner.entries.iter().map(|e| e.key.bytes).sum::<u64>();
            if room == Room::FreeOnly && held(&inner) + need > budget {
                return Ok(None);
            }
            while held(&inner) + need > budget {
                let lru = (0..inner.entries.len()).min_by_key(|&i| inner.entries[i].last_used);
                match lru {
                    Some(i) => drop(inner.entries.swap_remove(i)),
                    None => break,
                }
            }
        }
        let mut key = ResidentKey::prepare(
            backend,
            &circuit.name,
            &circuit.key,
            circuit.circuit.as_ref(),
            KeyPreparation::WarmUp,
        )?;
        key.bytes = need;
        let key = Arc::new(key);
        inner.entries.push(Entry { key: Arc::clone(&key), last_used: now });
        Ok(Some(key))
    }

    /// Forgets the key named `name`; `true` if it was resident.
    pub fn evict(&self, name: &str) -> bool {
        let mut inner = self.inner();
        let before = inner.entries.len();
        inner.entries.retain(|e| e.key.name != name);
        inner.entries.len() != before
    }

    /// The resident keys' names and bytes, most recently used first.
    pub fn list(&self) -> Vec<(String, u64)> {
        let inner = self.inner();
        let mut entries: Vec<&Entry> = inner.entries.iter().collect();
        entries.sort_by_key(|e| std::cmp::Reverse(e.last_used));
        entries.iter().map(|e| (e.key.name.clone(), e.key.bytes)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuits::{BuiltinCircuit, CircuitKind};
    use g16_backend::cpu::CpuBackend;

    /// A named key of the synthetic circuit at 2^size.
    fn circuit_key(name: &str, size: u32) -> CircuitKey {
        let circuit = BuiltinCircuit::new(CircuitKind::Synthetic, size, 1).unwrap();
        let compiled = crate::compiled::compile(circuit.clone()).unwrap();
        let key = CheckedKey::generate(circuit, &mut rand::rngs::OsRng).unwrap();
        CircuitKey::new(name, key, Some(compiled)).unwrap()
    }

    fn names(set: &ResidentSet) -> Vec<String> {
        set.list().into_iter().map(|(name, _)| name).collect()
    }

    #[test]
    fn keys_stay_within_the_budget_least_recently_used_out_first() {
        let cpu = CpuBackend::new();
        let [a, b, c] = ["a", "b", "c"].map(|n| circuit_key(n, 5));
        let each = a.device_bytes();
        assert!(each > 0 && b.device_bytes() == each && c.device_bytes() == each);
        // Room for two keys, not three.
        let set = ResidentSet::new(Some(2 * each + each / 2));
        let first = set.get_or_prepare(&cpu, &a).unwrap();
        set.get_or_prepare(&cpu, &b).unwrap();
        assert_eq!(names(&set), ["b", "a"]);
        // A resident key is the same prepared key, and using it makes it the most recent.
        assert!(Arc::ptr_eq(&first, &set.get_or_prepare(&cpu, &a).unwrap()));
        assert_eq!(names(&set), ["a", "b"]);
        // A third key evicts the least recently used one (b), not the one just used.
        set.get_or_prepare(&cpu, &c).unwrap();
        assert_eq!(names(&set), ["c", "a"]);
        assert!(set.list().iter().map(|(_, bytes)| bytes).sum::<u64>() <= 2 * each + each / 2);
        // An evicted key still in use stays valid for its holder; evicting twice finds nothing.
        assert!(set.evict("a") && !set.evict("a"));
        assert_eq!(names(&set), ["c"]);
        assert_eq!(first.name, "a");
    }

    #[test]
    fn a_key_larger_than_the_budget_is_refused_and_evicts_nothing() {
        let cpu = CpuBackend::new();
        let (small, large) = (circuit_key("small", 4), circuit_key("large", 6));
        let set = ResidentSet::new(Some(small.device_bytes()));
        set.get_or_prepare(&cpu, &small).unwrap();
        let refused = set.get_or_prepare(&cpu, &large).err().expect("over the budget");
        assert!(refused.to_string().contains("more than the resident budget"), "{refused}");
        assert_eq!(names(&set), ["small"]);
        // No budget: everything stays.
        let unbounded = ResidentSet::new(None);
        for key in [&small, &large] {
            unbounded.get_or_prepare(&cpu, key).unwrap();
        }
        assert_eq!(names(&unbounded), ["large", "small"]);
    }

    #[test]
    fn a_key_prepared_into_free_room_evicts_nothing() {
        let cpu = CpuBackend::new();
        let [a, b, c] = ["a", "b", "c"].map(|n| circuit_key(n, 5));
        let each = a.device_bytes();
        let set = ResidentSet::new(Some(2 * each + each / 2));
        assert!(set.prepare_into_free_room(&cpu, &a).unwrap());
        assert!(set.prepare_into_free_room(&cpu, &b).unwrap());
        // No room for a third beside them: refused, both stay.
        assert!(!set.prepare_into_free_room(&cpu, &c).unwrap());
        assert_eq!(names(&set), ["b", "a"]);
        // A resident key is found, not prepared again, and counts as used.
        assert!(set.prepare_into_free_room(&cpu, &a).unwrap());
        assert_eq!(names(&set), ["a", "b"]);
        // A job's key still evicts the least recently used one.
        set.get_or_prepare(&cpu, &c).unwrap();
        assert_eq!(names(&set), ["c", "a"]);
    }
}
