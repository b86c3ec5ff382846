//! Synthesis workers: partitions from the task queue, synthesized, into the bounded channel.

use std::panic::{catch_unwind, AssertUnwindSafe};

use super::device::Ready;
use super::job::{Partition, Ticket};
use super::{EngineError, Shared, Stage};
use g16_backend::Backend;
use crate::timeline::report::names;
use crate::timeline::Layer;

/// A partition waiting for a synthesis worker.
pub(crate) struct Task {
    pub ticket: Ticket,
    pub partition: Partition,
}

/// Runs until the task queue is closed and empty. A synthesis that fails or panics fails
/// its partition (and so its job); the worker goes on with the next task. With no task left
/// to take, it lets the device workers start, whatever the engine's `prefill` waits for.
pub(crate) fn synthesis_worker<B: Backend>(shared: &Shared<B>) {
    while let Some(task) = shared.tasks.pop() {
        synthesize_and_send(shared, task);
        if shared.tasks.len() == 0 {
            shared.channel.release();
        }
    }
}

fn synthesize_and_send<B: Backend>(shared: &Shared<B>, Task { mut ticket, partition }: Task) {
    ticket.end_wait();
    if let Some(why) = shared.reason_to_stop(&ticket) {
        ticket.cancel(why);
        return;
    }
    let (job, index) = (ticket.job.id, ticket.partition);
    let outcome = {
        let _g = ticket.tl.span_under(Layer::Engine, names::SYNTH, Some(ticket.span), "");
        let make = partition.make;
        shared.in_synthesis_pool(|| catch_unwind(AssertUnwindSafe(make)))
    };
    let instance = match outcome {
        Ok(Ok(instance)) => instance,
        Ok(Err(source)) => {
            shared.counters.failed();
            ticket.fail(EngineError::Partition { job, partition: index, stage: Stage::Synthesis, source });
            return;
        }
        Err(panic) => {
            shared.counters.failed();
            let message = super::error::panic_message(panic.as_ref());
            ticket.fail(EngineError::Panicked { job, partition: index, stage: Stage::Synthesis, message });
            return;
        }
    };
    shared.counters.synthesized();
    let tl = ticket.tl.clone();
    let _blocked = tl.span_under(Layer::Engine, names::BACKPRESSURE, Some(ticket.span), "");
    // CHAN_SEND and the CHANNEL span begin under the queue's lock, before any device
    // worker can take the partition (and end that span).
    let sent = shared.channel.push_with(Ready { ticket, instance }, |ready| {
        ready.ticket.tl.instant(Layer::Engine, names::CHAN_SEND, "");
        ready.ticket.begin_wait(names::CHANNEL);
    });
    if let Err(Ready { ticket, .. }) = sent {
        ticket.cancel("the engine shut down");
    }
}
