//! A backend opened on another thread while a key's file is read and decoded: CUDA's context
//! and kernels take a few hundred milliseconds, reading a large key about as long. The key's
//! subgroup checks (where its digest is not known) wait for the backend; otherwise it is
//! joined once the key is in.

use std::sync::{mpsc, Mutex, OnceLock};
use std::thread::Scope;

use g16::prover::{OnBackend, SubgroupCheck};
use g16::{AnyBackend, BackendError, G1Affine, G2Affine};

/// A backend being opened, usable as a key's subgroup checker.
pub struct Opening {
    rx: Mutex<mpsc::Receiver<Result<AnyBackend, BackendError>>>,
    opened: OnceLock<Result<AnyBackend, BackendError>>,
}

impl Opening {
    /// Starts `open` on a thread of `scope`.
    pub fn start<'scope>(
        scope: &'scope Scope<'scope, '_>,
        open: impl FnOnce() -> Result<AnyBackend, BackendError> + Send + 'scope,
    ) -> Opening {
        let (tx, rx) = mpsc::channel();
        scope.spawn(move || {
            let _ = tx.send(open());
        });
        Opening { rx: Mutex::new(rx), opened: OnceLock::new() }
    }

    fn wait(&self) -> &Result<AnyBackend, BackendError> {
        self.opened.get_or_init(|| {
            let rx = self.rx.lock().unwrap_or_else(|p| p.into_inner());
            rx.recv().unwrap_or_else(|_| Err(BackendError::Device("the thread opening the backend stopped".into())))
        })
    }

    /// The backend once it is open (waiting for it), for work beside the key's reading;
    /// `None` where it did not open ([`Opening::finish`] says why).
    pub fn backend(&self) -> Option<&AnyBackend> {
        self.wait().as_ref().ok()
    }

    /// The backend, or why it did not open.
    pub fn finish(self) -> Result<AnyBackend, BackendError> {
        self.wait();
        self.opened.into_inner().expect("waited for above")
    }

    fn checker(&self) -> Result<OnBackend<'_, AnyBackend>, BackendError> {
        match self.wait() {
            Ok(backend) => Ok(OnBackend(backend)),
            // The caller reports the open's own error from `finish`.
            Err(e) => Err(BackendError::Device(format!("no backend for the key's checks: {e}"))),
        }
    }
}

/// The key's checks on the backend once it is open; a key's vectors one by one, as on any
/// backend (`SubgroupCheck`'s defaults, which `OnBackend` keeps too).
impl SubgroupCheck for Opening {
    fn first_outside_g1(&self, points: &[G1Affine]) -> Result<Option<usize>, BackendError> {
        self.checker()?.first_outside_g1(points)
    }

    fn first_outside_g2(&self, points: &[G2Affine]) -> Result<Option<usize>, BackendError> {
        self.checker()?.first_outside_g2(points)
    }
}
