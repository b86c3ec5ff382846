//! Whose fault a failed job is. A server runs in this process (CPU backend) over a store that
//! breaks the stored witness of some circuits' jobs after the API accepted it: those jobs fail
//! as the server's fault (`internal`, INTERNAL), while a client's bad witness is the client's
//! (refused with INVALID_ARGUMENT, or `unsatisfied`, FAILED_PRECONDITION).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use g16_client::tonic::Code;
use g16_client::{Client, ClientError, ProveOptions, WitnessFormat};
use g16_queue::{
    CircuitRecord, CircuitSummary, Depth, JobId, JobRecord, JobState, JobStore, Lease, MemoryStore, NewJob, Outcome,
    StoreResult,
};
use g16_service::{error::reason, ServeConfig};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/circom/fixtures");

/// Jobs of this circuit are handed out with an element that is not in the field.
const NOT_AN_ELEMENT: &str = "not-an-element";
/// Jobs of this circuit are handed out one element short.
const CUT: &str = "cut";

/// A memory store that changes the witness of the jobs it hands out for [`NOT_AN_ELEMENT`] and
/// [`CUT`], as a store that corrupts what it keeps would.
struct BreakingStore(MemoryStore);

fn broken(circuit: &str, witness: &[u8]) -> Option<Vec<u8>> {
    match circuit {
        NOT_AN_ELEMENT => {
            let mut w = witness.to_vec();
            w[32..64].fill(0xff);
            Some(w)
        }
        CUT => Some(witness[..witness.len() - 32].to_vec()),
        _ => None,
    }
}

#[async_trait]
impl JobStore for BreakingStore {
    async fn put_circuit(&self, circuit: CircuitRecord) -> StoreResult<()> {
        self.0.put_circuit(circuit).await
    }
    async fn circuit(&self, name: &str) -> StoreResult<Option<CircuitRecord>> {
        self.0.circuit(name).await
    }
    async fn circuits(&self) -> StoreResult<Vec<CircuitSummary>> {
        self.0.circuits().await
    }
    async fn submit(&self, job: NewJob) -> StoreResult<()> {
        self.0.submit(job).await
    }
    async fn take(&self, worker: &str, prefer: &[String], lease: Duration, limit: usize) -> StoreResult<Vec<Lease>> {
        let mut leases = self.0.take(worker, prefer, lease, limit).await?;
        for lease in &mut leases {
            if let Some(witness) = broken(&lease.circuit, &lease.witness) {
                lease.witness = Arc::new(witness);
            }
        }
        Ok(leases)
    }
    async fn renew(&self, worker: &str, jobs: &[JobId], lease: Duration) -> StoreResult<Vec<JobId>> {
        self.0.renew(worker, jobs, lease).await
    }
    async fn complete(&self, worker: &str, job: JobId, outcome: Outcome) -> StoreResult<bool> {
        self.0.complete(worker, job, outcome).await
    }
    async fn cancel(&self, job: JobId) -> StoreResult<Option<JobState>> {
        self.0.cancel(job).await
    }
    async fn job(&self, job: JobId) -> StoreResult<Option<JobRecord>> {
        self.0.job(job).await
    }
    async fn depth(&self) -> StoreResult<Depth> {
        self.0.depth().await
    }
    async fn purge(&self, settled_before: SystemTime) -> StoreResult<u64> {
        self.0.purge(settled_before).await
    }
    async fn changed(&self, job: JobId, timeout: Duration) {
        self.0.changed(job, timeout).await
    }
}

fn status(e: ClientError) -> (Code, String) {
    match e {
        ClientError::Status(s) => (s.code(), s.message().to_string()),
        other => panic!("expected a status, got {other}"),
    }
}

/// The reason `job` failed with, as the store keeps it.
async fn reason_of(store: &BreakingStore, job: &str) -> String {
    let record = store.job(JobId::parse_str(job).unwrap()).await.unwrap().expect("the job is stored");
    match record.outcome {
        Some(Outcome::Failed { code, .. }) => code,
        other => panic!("job {job} did not fail: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_witness_the_store_broke_is_internal_and_a_bad_one_the_clients() {
    let store = Arc::new(BreakingStore(MemoryStore::new()));
    let config = ServeConfig { listen: ([127, 0, 0, 1], 0).into(), metrics: None, ..ServeConfig::default() };
    let devices = vec![("cpu:0".to_string(), g16::backend::CpuBackend::new())];
    let bound = g16_service::bind(config, Arc::clone(&store) as Arc<dyn JobStore>, false, devices).await.unwrap();
    let addr = bound.grpc_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(bound.serve(async {
        let _ = stopped.await;
    }));
    let mut client = Client::connect(&format!("http://{addr}"), None).await.unwrap();

    let zkey = std::fs::read(format!("{FIXTURES}/small.zkey")).unwrap();
    let wtns = std::fs::read(format!("{FIXTURES}/small.wtns")).unwrap();
    for name in ["small", NOT_AN_ELEMENT, CUT] {
        client.register_zkey(name, &zkey).await.unwrap();
    }
    let raw = g16_service::witness::to_stored(WitnessFormat::Wtns, wtns.clone(), 5).unwrap();
    let uploads = client.clone();
    let prove = move |circuit: &'static str, witness: Vec<u8>| {
        let mut client = uploads.clone();
        async move { client.prove(circuit, WitnessFormat::Raw, &witness, ProveOptions::default()).await }
    };

    // Accepted whole, broken in the store: the server's fault, whatever the engine noticed.
    for circuit in [NOT_AN_ELEMENT, CUT] {
        let job = prove(circuit, raw.clone()).await.unwrap();
        let (code, message) = status(client.await_job(&job).await.unwrap_err());
        assert_eq!(code, Code::Internal, "{circuit}: {message}");
        assert_eq!(reason_of(&store, &job).await, reason::INTERNAL, "{circuit}: {message}");
    }

    // The client's bad witnesses: wrong values are refused at upload, before any job exists…
    let mut not_an_element = raw.clone();
    not_an_element[32..64].fill(0xff);
    let (code, message) = status(prove("small", not_an_element).await.unwrap_err());
    assert_eq!(code, Code::InvalidArgument, "{message}");
    let (code, message) = status(prove("small", raw[..raw.len() - 32].to_vec()).await.unwrap_err());
    assert_eq!(code, Code::InvalidArgument, "{message}");
    // …and well-formed values that do not satisfy the circuit fail the job as unsatisfied.
    let mut unsatisfied = raw.clone();
    let last = unsatisfied.len() - 32;
    unsatisfied[last] ^= 1;
    let job = prove("small", unsatisfied).await.unwrap();
    let (code, message) = status(client.await_job(&job).await.unwrap_err());
    assert_eq!(code, Code::FailedPrecondition, "{message}");
    assert_eq!(reason_of(&store, &job).await, reason::UNSATISFIED, "{message}");

    // A sound witness still proves.
    let job = prove("small", raw).await.unwrap();
    assert!(client.await_job(&job).await.unwrap().verified);

    let _ = stop.send(());
    server.await.unwrap().unwrap();
}
