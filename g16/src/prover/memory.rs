//! The device memory of a key's proofs, planned before anything is uploaded: what stays
//! resident (the key's bases, the compiled circuit), what each proof holds while it runs (its
//! vectors, the largest MSM's workspace), and what is made only where room is left (shifted
//! bases). A key that cannot fit is refused with the plan in the error, before a 40 GB upload
//! fails a third of the way through.
//!
//! The sizes are the GPU backends' encodings: Fr as 8 words, G1 affine as 24, G2 as 48 (the
//! CUDA and WGSL layouts agree). The MSM workspace is an estimate (its window width is the
//! backend's choice at run time): sorted bucket entries, one word a (scalar, window), and a
//! set of buckets a window.

use crate::compiled::shape::{KeyShape, MatrixSize, Qap};
use g16_backend::msm_plan::{Layout, WINDOW_WIDTHS};

const FR_BYTES: u64 = 32;
const G1_BYTES: u64 = 96;
const G2_BYTES: u64 = 192;
/// A bucket of G2 in XYZZ coordinates (four Fq2 values), the larger curve's.
const G2_BUCKET_BYTES: u64 = 4 * 96;
/// What the driver, the kernels' tables and fragmentation take beyond the plan: 2 GiB or 3 %.
const HEADROOM_MIN: u64 = 2 << 30;

/// When an item occupies the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Residence {
    /// From the key's (or circuit's) preparation until it is dropped.
    Resident,
    /// While a proof runs.
    PerProof,
}

/// One buffer (or group of buffers) of the plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryItem {
    pub what: &'static str,
    pub bytes: u64,
    pub residence: Residence,
}

/// The device memory of proofs with one key (and, for compiled proofs, its circuit).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryPlan {
    pub items: Vec<MemoryItem>,
}

/// Why a plan does not fit a device.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "the key does not fit {device}: it needs {} GiB ({}) with {} GiB of headroom, the device has {} GiB",
    gib(*.needed), .plan, gib(*.headroom), gib(*.capacity)
)]
pub struct DoesNotFit {
    pub device: String,
    pub needed: u64,
    pub headroom: u64,
    pub capacity: u64,
    pub plan: String,
}

fn gib(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / (1u64 << 30) as f64)
}

impl MemoryPlan {
    /// The plan of proofs with a key of `shape`, and a compiled circuit of matrices `circuit`
    /// resident beside it if given.
    pub fn new(shape: &KeyShape, circuit: Option<MatrixSize>) -> MemoryPlan {
        let vars = shape.num_variables as u64;
        let domain = shape.domain_size as u64;
        let private = vars.saturating_sub(shape.num_instance as u64);
        let h_len = match shape.qap {
            Qap::Libsnark => domain.saturating_sub(1),
            Qap::Snarkjs => domain,
        };
        let resident = |what, bytes| MemoryItem { what, bytes, residence: Residence::Resident };
        let per_proof = |what, bytes| MemoryItem { what, bytes, residence: Residence::PerProof };
        let mut items = vec![
            resident("G1 bases: A, B, L, H", (2 * vars + private + h_len) * G1_BYTES),
            resident("G2 bases: B", vars * G2_BYTES),
        ];
        if let Some(m) = circuit {
            items.push(resident("compiled circuit: A, B, C", m.entries * (FR_BYTES + 4) + (m.rows + m.matrices) * 4));
        }
        items.push(per_proof("assignment z", vars * FR_BYTES));
        items.push(per_proof("a, b, c over the domain", 3 * domain * FR_BYTES));
        items.push(per_proof("MSM workspace (estimate)", msm_workspace(vars.max(domain))));
        MemoryPlan { items }
    }

    /// Bytes resident and per proof together: what one proof at a time needs.
    pub fn needed(&self) -> u64 {
        self.items.iter().map(|i| i.bytes).sum()
    }

    /// Bytes of one residence.
    pub fn of(&self, residence: Residence) -> u64 {
        self.items.iter().filter(|i| i.residence == residence).map(|i| i.bytes).sum()
    }

    /// The margin kept free for what the plan does not count.
    pub fn headroom(capacity: u64) -> u64 {
        (capacity / 32).max(HEADROOM_MIN)
    }

    /// Ok if the plan fits `capacity` bytes of `device` with headroom; the plan in the error if not.
    pub fn check(&self, device: &str, capacity: u64) -> Result<(), DoesNotFit> {
        let headroom = Self::headroom(capacity);
        if self.needed().saturating_add(headroom) <= capacity {
            return Ok(());
        }
        Err(DoesNotFit { device: device.to_string(), needed: self.needed(), headroom, capacity, plan: self.describe() })
    }

    /// "G1 bases: A, B, L, H 6.0 GiB resident, …" in one line.
    pub fn describe(&self) -> String {
        let items: Vec<String> = self
            .items
            .iter()
            .map(|i| {
                let when = match i.residence {
                    Residence::Resident => "resident",
                    Residence::PerProof => "per proof",
                };
                format!("{} {} GiB {when}", i.what, gib(i.bytes))
            })
            .collect();
        items.join(", ")
    }
}

/// The workspace of an MSM of n points: sorted entries and the ones list (a word each), and
/// a window's bucket set with its counts, offsets and cursors, at the width the
/// length-based rule picks (⌈log2 n⌉ − 6 within the widths); CUDA's sliced accumulation adds
/// a bucket's worth of carries and a tail word a slice, at most a slice a bucket.
fn msm_workspace(n: u64) -> u64 {
    let log = u64::BITS - n.max(1).leading_zeros();
    let c = log.saturating_sub(6).clamp(*WINDOW_WIDTHS.start(), *WINDOW_WIDTHS.end());
    let layout = Layout::windowed(c);
    let entries = layout.entries(n as usize) * 4 + n * 4;
    let buckets = layout.buckets() * (4 * 4 + 2 * G2_BUCKET_BYTES);
    entries + buckets
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuits::{BuiltinCircuit, CircuitKind};

    fn synthetic_shape(size: u32) -> KeyShape {
        let c = BuiltinCircuit::new(CircuitKind::Synthetic, size, 0).unwrap();
        let num_instance = c.num_instance_variables();
        KeyShape {
            num_instance,
            num_variables: num_instance + 5 * c.units() + 1,
            domain_size: 1 << size,
            qap: Qap::Libsnark,
        }
    }

    #[test]
    fn the_bases_are_counted_in_device_encodings() {
        let shape = synthetic_shape(10);
        let plan = MemoryPlan::new(&shape, None);
        let vars = shape.num_variables as u64;
        let g1 = (2 * vars + (vars - 3) + 1023) * 96;
        assert_eq!(plan.items[0].bytes, g1);
        assert_eq!(plan.items[1].bytes, vars * 192);
        assert_eq!(plan.of(Residence::Resident), g1 + vars * 192);
        assert_eq!(plan.needed(), plan.of(Residence::Resident) + plan.of(Residence::PerProof));
    }

    #[test]
    fn the_compiled_circuit_is_resident_beside_the_key() {
        let circuit = BuiltinCircuit::new(CircuitKind::Synthetic, 10, 0).unwrap().compile().unwrap();
        let shape = synthetic_shape(10);
        let without = MemoryPlan::new(&shape, None);
        let with = MemoryPlan::new(&shape, Some(circuit.matrix_size()));
        let (a, b, c) = circuit.matrices();
        let entries = (a.entries() + b.entries() + c.unwrap().entries()) as u64;
        let rows = (a.rows() + b.rows() + c.unwrap().rows() + 3) as u64;
        assert_eq!(with.needed() - without.needed(), entries * 36 + rows * 4);
    }

    #[test]
    fn a_synthetic_2_26_key_fits_an_h200_and_not_a_24_gib_card() {
        let plan = MemoryPlan::new(&synthetic_shape(26), None);
        // 4 G1 and 1 G2 vectors of about 1.25·2^26 points: 47 GB, 43.5 GiB.
        let resident = plan.of(Residence::Resident) as f64 / (1u64 << 30) as f64;
        assert!((43.0..44.0).contains(&resident), "{resident} GiB");
        assert!(plan.check("H200", 139 << 30).is_ok());
        let err = plan.check("a 24 GiB card", 24 << 30).unwrap_err();
        assert_eq!(err.capacity, 24 << 30);
        let message = err.to_string();
        assert!(message.contains("a 24 GiB card") && message.contains("G2 bases: B"), "{message}");
    }

    #[test]
    fn headroom_is_a_floor_or_a_share() {
        assert_eq!(MemoryPlan::headroom(8 << 30), 2 << 30);
        assert_eq!(MemoryPlan::headroom(128 << 30), 4 << 30);
    }
}
