//! The host-memory budget for witnesses in flight: uploads under way, and (for a server whose
//! queue is its own memory) the witnesses of its queued and running jobs. An upload that does
//! not fit is refused at its header, so the queue never grows past what the host can hold.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use g16_queue::JobId;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError};

/// Budgeted in KiB: a semaphore counts at most `u32::MAX` permits at a time.
const UNIT: u64 = 1024;

pub struct WitnessBudget {
    permits: Arc<Semaphore>,
    total: u64,
    /// Permits of jobs whose witnesses this server's memory holds until they settle.
    held: Mutex<HashMap<JobId, OwnedSemaphorePermit>>,
}

/// Budget taken for one witness; given back on drop.
pub struct Reservation(OwnedSemaphorePermit);

impl WitnessBudget {
    pub fn new(bytes: u64) -> Self {
        let units = (bytes / UNIT).clamp(1, u64::from(u32::MAX));
        WitnessBudget { permits: Arc::new(Semaphore::new(units as usize)), total: units * UNIT, held: Mutex::default() }
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    pub fn in_flight(&self) -> u64 {
        (self.total / UNIT - self.permits.available_permits() as u64) * UNIT
    }

    /// Reserves `bytes`, or `None` where they do not fit now.
    pub fn try_reserve(&self, bytes: u64) -> Option<Reservation> {
        let units = u32::try_from(bytes.div_ceil(UNIT).max(1)).ok()?;
        match Arc::clone(&self.permits).try_acquire_many_owned(units) {
            Ok(permit) => Some(Reservation(permit)),
            Err(TryAcquireError::NoPermits) | Err(TryAcquireError::Closed) => None,
        }
    }

    /// Keeps a reservation until [`WitnessBudget::release`] for `job`.
    pub fn hold(&self, job: JobId, reservation: Reservation) {
        self.held.lock().unwrap_or_else(PoisonError::into_inner).insert(job, reservation.0);
    }

    pub fn release(&self, job: JobId) {
        self.held.lock().unwrap_or_else(PoisonError::into_inner).remove(&job);
    }

    /// The jobs whose reservations are held.
    pub fn held_jobs(&self) -> Vec<JobId> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner).keys().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_fit_the_budget_and_come_back() {
        let budget = WitnessBudget::new(10 * UNIT);
        let a = budget.try_reserve(6 * UNIT).unwrap();
        assert!(budget.try_reserve(5 * UNIT).is_none());
        assert_eq!(budget.in_flight(), 6 * UNIT);
        let job = JobId::new_v4();
        budget.hold(job, a);
        assert!(budget.try_reserve(5 * UNIT).is_none());
        budget.release(job);
        assert!(budget.try_reserve(10 * UNIT).is_some());
        assert!(budget.try_reserve(11 * UNIT).is_none());
    }
}
