//! A closable multi-producer, multi-consumer FIFO with an optional bound: the engine's task
//! queue (unbounded) and its channel of synthesized partitions (bounded: the host-memory
//! backpressure). std's `sync_channel` has one consumer, and the engine has many.
//!
//! It records its high-water mark, so tests can check the bound was respected exactly, and
//! runs a callback under its lock as an item is enqueued, so the event that marks the send
//! is recorded before any consumer can see the item. It can hold its consumers back until it
//! first holds a given number of items (the engine's `prefill`), or until told to let them go.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

pub(crate) struct WorkQueue<T> {
    state: Mutex<State<T>>,
    not_empty: Condvar,
    not_full: Condvar,
    bound: usize,
}

struct State<T> {
    items: VecDeque<T>,
    closed: bool,
    high_water: usize,
    /// Until set, consumers wait (unless the queue is closed): see `with_prime`.
    primed: bool,
    prime: usize,
}

impl<T> WorkQueue<T> {
    /// A queue of at most `bound` items (`usize::MAX`: unbounded); `bound` ≥ 1.
    pub fn new(bound: usize) -> Self {
        Self::with_prime(bound, 0)
    }

    /// A queue whose consumers wait until it first holds `prime` items (at most `bound`), or
    /// `release` or `close` is called; after that it is an ordinary queue.
    pub fn with_prime(bound: usize, prime: usize) -> Self {
        let prime = prime.min(bound.max(1));
        WorkQueue {
            state: Mutex::new(State {
                items: VecDeque::new(),
                closed: false,
                high_water: 0,
                primed: prime == 0,
                prime,
            }),
            not_empty: Condvar::new(),
            not_full: Condvar::new(),
            bound: bound.max(1),
        }
    }

    /// The queue's state; a panic elsewhere while it was held (only in `on_enqueue`) leaves
    /// the deque consistent, so poisoning is ignored.
    fn state(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Enqueues `item`, blocking while the queue is full. `on_enqueue` runs under the
    /// queue's lock just before the item becomes visible. Gives the item back if the queue
    /// is (or gets) closed.
    pub fn push_with(&self, mut item: T, on_enqueue: impl FnOnce(&mut T)) -> Result<(), T> {
        let mut state = self.state();
        while !state.closed && state.items.len() >= self.bound {
            state = self.not_full.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        if state.closed {
            return Err(item);
        }
        on_enqueue(&mut item);
        state.items.push_back(item);
        state.high_water = state.high_water.max(state.items.len());
        let just_primed = !state.primed && state.items.len() >= state.prime;
        state.primed |= just_primed;
        drop(state);
        if just_primed {
            self.not_empty.notify_all();
        } else {
            self.not_empty.notify_one();
        }
        Ok(())
    }

    pub fn push(&self, item: T) -> Result<(), T> {
        self.push_with(item, |_| {})
    }

    /// The next item, blocking while the queue is empty and open; `None` once it is closed
    /// and empty.
    pub fn pop(&self) -> Option<T> {
        self.pop_preferring(|_| false)
    }

    /// [`WorkQueue::pop`], but the first item `prefer` accepts where there is one (else the
    /// oldest). `prefer` runs under the queue's lock: it must be quick and take no lock a
    /// producer or consumer holds while using the queue.
    pub fn pop_preferring(&self, prefer: impl Fn(&T) -> bool) -> Option<T> {
        let mut state = self.state();
        loop {
            if state.primed || state.closed {
                let at = state.items.iter().position(&prefer).unwrap_or(0);
                if let Some(item) = state.items.remove(at) {
                    drop(state);
                    self.not_full.notify_one();
                    return Some(item);
                }
            }
            if state.closed {
                return None;
            }
            state = self.not_empty.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Lets waiting and future consumers take items now, however few are queued.
    pub fn release(&self) {
        let mut state = self.state();
        if !state.primed {
            state.primed = true;
            drop(state);
            self.not_empty.notify_all();
        }
    }

    /// No more pushes (blocked pushers get their items back); pops drain what is queued.
    pub fn close(&self) {
        self.state().closed = true;
        self.not_empty.notify_all();
        self.not_full.notify_all();
    }

    /// Closes the queue and takes out everything in it, for the caller to cancel (outside
    /// the lock: dropping an item may take other locks).
    pub fn close_and_take(&self) -> Vec<T> {
        let items = {
            let mut state = self.state();
            state.closed = true;
            state.items.drain(..).collect()
        };
        self.not_empty.notify_all();
        self.not_full.notify_all();
        items
    }

    pub fn len(&self) -> usize {
        self.state().items.len()
    }

    /// The most items the queue has held at once.
    pub fn high_water(&self) -> usize {
        self.state().high_water
    }

    pub fn bound(&self) -> usize {
        self.bound
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn fifo_bound_and_high_water() {
        let q = WorkQueue::new(2);
        q.push(1).unwrap();
        q.push_with(2, |x| *x *= 10).unwrap();
        assert_eq!((q.len(), q.high_water(), q.bound()), (2, 2, 2));
        assert_eq!(q.pop(), Some(1));
        assert_eq!(q.pop(), Some(20));
        q.close();
        assert_eq!(q.push(3), Err(3), "closed: the item comes back");
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn a_full_queue_blocks_until_a_pop_and_close_releases_pushers() {
        let q = Arc::new(WorkQueue::new(1));
        q.push(0).unwrap();
        let pusher = {
            let q = Arc::clone(&q);
            std::thread::spawn(move || q.push(1))
        };
        // The pusher cannot finish until this pop makes room; then the queue holds its item.
        assert_eq!(q.pop(), Some(0));
        assert_eq!(pusher.join().expect("pusher"), Ok(()));
        assert_eq!(q.pop(), Some(1));
        assert_eq!(q.high_water(), 1, "never more than the bound");

        q.push(2).unwrap();
        let blocked = {
            let q = Arc::clone(&q);
            std::thread::spawn(move || q.push(3))
        };
        assert_eq!(q.close_and_take(), vec![2]);
        // Blocked or not yet pushing, the pusher gets its item back: the queue is closed.
        assert_eq!(blocked.join().expect("pusher"), Err(3));
    }

    #[test]
    fn a_primed_queue_holds_consumers_until_it_is_full_enough_or_released() {
        let q = Arc::new(WorkQueue::with_prime(4, 3));
        let consumer = {
            let q = Arc::clone(&q);
            std::thread::spawn(move || (q.pop(), q.pop(), q.pop()))
        };
        q.push(1).unwrap();
        q.push(2).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert_eq!(q.len(), 2, "two items are not enough: the consumer must still wait");
        q.push(3).unwrap();
        assert_eq!(consumer.join().expect("consumer"), (Some(1), Some(2), Some(3)));
        // Primed once, it stays an ordinary queue.
        q.push(4).unwrap();
        assert_eq!(q.pop(), Some(4));

        let q = Arc::new(WorkQueue::with_prime(4, 3));
        q.push(1).unwrap();
        let consumer = {
            let q = Arc::clone(&q);
            std::thread::spawn(move || q.pop())
        };
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert_eq!(q.len(), 1, "held back");
        q.release();
        assert_eq!(consumer.join().expect("consumer"), Some(1));

        let q: WorkQueue<u32> = WorkQueue::with_prime(4, 3);
        q.push(9).unwrap();
        q.close();
        assert_eq!((q.pop(), q.pop()), (Some(9), None), "closing drains what is queued");
    }

    #[test]
    fn close_wakes_waiting_consumers() {
        let q: Arc<WorkQueue<u32>> = Arc::new(WorkQueue::new(usize::MAX));
        let consumers: Vec<_> = (0..3)
            .map(|_| {
                let q = Arc::clone(&q);
                std::thread::spawn(move || q.pop())
            })
            .collect();
        q.push(7).unwrap();
        q.close();
        let got: Vec<Option<u32>> = consumers.into_iter().map(|c| c.join().expect("consumer")).collect();
        assert_eq!(got.iter().filter(|g| **g == Some(7)).count(), 1);
        assert_eq!(got.iter().filter(|g| g.is_none()).count(), 2);
    }
}
