//! The finalizer: assembles each proof on the CPU and, unless told not to, verifies it.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::Receiver;

use super::device::Proven;
use super::job::PartitionProof;
use super::{EngineError, Shared, Stage};
use g16_backend::Backend;
use crate::prover::{assemble, verify};
use crate::timeline::report::names;
use crate::timeline::Layer;

/// Runs until every device worker has dropped its sender.
pub(crate) fn finalizer<B: Backend>(shared: &Shared<B>, proven: Receiver<Proven>) {
    for Proven { ticket, sums, instance, key } in proven {
        if ticket.job_failed() {
            ticket.cancel("another partition of the job failed");
            continue;
        }
        let (job, partition) = (ticket.job.id, ticket.partition);
        let key = &key.key;
        let public_inputs = instance.public_inputs(key.shape().num_instance);
        let check = shared.config.verify;
        let tl = &ticket.tl;
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let _f = tl.span_under(Layer::Engine, names::FINALIZE, Some(ticket.span), "");
            let proof = assemble(key, &sums, ticket.randomness.r(), ticket.randomness.s(), tl);
            if check {
                let _v = tl.span(Layer::Engine, names::VERIFY);
                match verify(key, &proof, public_inputs) {
                    Ok(true) => {}
                    Ok(false) => return Err(EngineError::NotVerified { job, partition }),
                    Err(source) => {
                        return Err(EngineError::Partition { job, partition, stage: Stage::Finalize, source })
                    }
                }
            }
            tl.instant(Layer::Engine, names::PROOF_DONE, "");
            Ok(PartitionProof { proof, public_inputs: public_inputs.to_vec(), verified: check })
        }));
        match outcome {
            Ok(Ok(proof)) => {
                shared.counters.proved();
                ticket.complete(proof)
            }
            Ok(Err(error)) => {
                shared.counters.failed();
                ticket.fail(error)
            }
            Err(panic) => {
                shared.counters.failed();
                let message = super::error::panic_message(panic.as_ref());
                ticket.fail(EngineError::Panicked { job, partition, stage: Stage::Finalize, message })
            }
        }
    }
}
