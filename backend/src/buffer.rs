//! Buffers: opaque handles to data a backend holds, stamped with the backend that made them.
//!
//! A buffer's storage is the backend's own type (a `Vec` on the CPU, a device allocation on a
//! GPU), type-erased here so that the prover moves handles without knowing what is inside.
//! A buffer handed to a backend that did not make it is a typed error, never undefined
//! behaviour; dropping a handle frees its memory.

use std::any::Any;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{BackendError, BackendResult};
use crate::curve::{Fr, G1Affine, G2Affine};

/// Element types a [`DeviceBuffer`] can hold.
pub trait Element: Send + Sync + 'static {
    const NAME: &'static str;
    /// Bytes per element in host memory, for budgets and messages.
    const HOST_BYTES: usize;
}
impl Element for Fr {
    const NAME: &'static str = "Fr";
    const HOST_BYTES: usize = 32;
}
// Named through the concrete curve configs: through the `G1Affine`/`G2Affine` aliases
// (projections of `Bls12Config`) coherence cannot tell the two impls apart.
impl Element for ark_ec::short_weierstrass::Affine<ark_bls12_381::g1::Config> {
    const NAME: &'static str = "G1Affine";
    const HOST_BYTES: usize = std::mem::size_of::<G1Affine>();
}
impl Element for ark_ec::short_weierstrass::Affine<ark_bls12_381::g2::Config> {
    const NAME: &'static str = "G2Affine";
    const HOST_BYTES: usize = std::mem::size_of::<G2Affine>();
}

/// A backend instance's identity, stamped on the buffers it makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BackendId(pub u64);

impl BackendId {
    pub fn fresh() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        BackendId(NEXT.fetch_add(1, Ordering::Relaxed))
    }

    /// For backends: a buffer of `len` elements, stamped with this id, holding their storage.
    pub fn wrap<T: Element, S: Send + Sync + 'static>(self, len: usize, storage: S) -> DeviceBuffer<T> {
        DeviceBuffer::new(self, len, Box::new(storage))
    }
}

/// An opaque handle to `len` elements of `T` held by one backend.
pub struct DeviceBuffer<T: Element> {
    owner: BackendId,
    len: usize,
    storage: Box<dyn Any + Send + Sync>,
    _elem: PhantomData<fn() -> T>,
}

impl<T: Element> DeviceBuffer<T> {
    /// For backends: wrap their own storage.
    pub fn new(owner: BackendId, len: usize, storage: Box<dyn Any + Send + Sync>) -> Self {
        DeviceBuffer { owner, len, storage, _elem: PhantomData }
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn owner(&self) -> BackendId {
        self.owner
    }
    /// For backends: their storage, if this buffer is theirs and of storage type `S`.
    pub fn storage<S: 'static>(&self, me: BackendId) -> BackendResult<&S> {
        self.check_owner(me)?;
        self.storage.downcast_ref::<S>().ok_or_else(|| Self::unexpected_storage())
    }
    pub fn storage_mut<S: 'static>(&mut self, me: BackendId) -> BackendResult<&mut S> {
        self.check_owner(me)?;
        self.storage.downcast_mut::<S>().ok_or_else(|| Self::unexpected_storage())
    }
    fn unexpected_storage() -> BackendError {
        BackendError::Device(format!("buffer of {} has unexpected storage", T::NAME))
    }
    fn check_owner(&self, me: BackendId) -> BackendResult<()> {
        if self.owner == me {
            Ok(())
        } else {
            Err(BackendError::ForeignBuffer { owner: self.owner.0, user: me.0 })
        }
    }
}

impl<T: Element> fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DeviceBuffer<{}>[{}] of backend #{}", T::NAME, self.len, self.owner.0)
    }
}

pub type ScalarBuffer = DeviceBuffer<Fr>;
pub type G1Bases = DeviceBuffer<G1Affine>;
pub type G2Bases = DeviceBuffer<G2Affine>;

/// The scalars of an MSM: from the host, or a range of a buffer already on the device
/// (the H scalars and the assignment never leave it).
#[derive(Clone, Debug)]
pub enum Scalars<'a> {
    Host(&'a [Fr]),
    Device(&'a ScalarBuffer, Range<usize>),
}

impl Scalars<'_> {
    pub fn len(&self) -> usize {
        match self {
            Scalars::Host(s) => s.len(),
            Scalars::Device(_, r) => r.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Checks that `range` lies inside a buffer of `len` elements.
pub fn check_range(op: &'static str, range: &Range<usize>, len: usize) -> BackendResult<()> {
    if range.start <= range.end && range.end <= len {
        Ok(())
    } else {
        Err(BackendError::OutOfRange { op, start: range.start, end: range.end, len })
    }
}

/// Checks that an operation's operands have the same length.
pub fn check_same_len(op: &'static str, expected: usize, got: usize) -> BackendResult<()> {
    if expected == got {
        Ok(())
    } else {
        Err(BackendError::LengthMismatch { op, expected, got })
    }
}

/// Checks an MSM's operands: a device range inside its buffer, and at least as many bases
/// as scalars. Every backend runs this before any work, so all refuse alike.
pub fn check_msm(op: &'static str, bases_len: usize, scalars: &Scalars<'_>) -> BackendResult<()> {
    if let Scalars::Device(buf, range) = scalars {
        check_range(op, range, buf.len())?;
    }
    if bases_len < scalars.len() {
        return Err(BackendError::LengthMismatch { op, expected: scalars.len(), got: bases_len });
    }
    Ok(())
}
