//! The rules of `g16_queue`'s crate documentation, each checked on every store: `memory::*`
//! on a `MemoryStore`, `postgres::*` on a `PgStore` over a throw-away PostgreSQL cluster (see
//! `g16_queue::testing`; SKIPPED where PostgreSQL is not installed, a failure with
//! `G16_REQUIRE_POSTGRES=1`).

use std::collections::HashSet;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use g16_queue::{
    CircuitRecord, Depth, JobId, JobState, JobStore, Lease, NewJob, Outcome, Priority, StoreError, Uuid,
    ATTEMPTS_EXHAUSTED, MAX_ATTEMPTS,
};

type Store = Arc<dyn JobStore>;

/// No rule takes longer; a store that hangs fails instead.
const RULE_LIMIT: Duration = Duration::from_secs(90);
/// A lease no test outlives.
const LONG: Duration = Duration::from_secs(60);
/// A lease the lease tests outlive on purpose.
const SHORT: Duration = Duration::from_secs(1);
/// Past a `SHORT` lease (the database and the test share the host's clock, give or take).
const PAST_SHORT: Duration = Duration::from_millis(1500);

async fn run<F, Fut>(store: Store, rule: F)
where
    F: FnOnce(Store) -> Fut,
    Fut: Future<Output = ()>,
{
    tokio::time::timeout(RULE_LIMIT, rule(store)).await.expect("the rule did not finish in time");
}

/// Each rule, as a test on each store.
macro_rules! contract {
    ($($rule:ident),* $(,)?) => {
        mod memory {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $rule() {
                    super::run(std::sync::Arc::new(g16_queue::MemoryStore::new()), super::$rule).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $rule() {
                    let Some(cluster) = g16_queue::testing::TempPostgres::start_or_skip() else { return };
                    let store = tokio::time::timeout(super::RULE_LIMIT, g16_queue::PgStore::connect(cluster.url()))
                        .await
                        .expect("connecting timed out")
                        .expect("connecting to the test cluster");
                    super::run(std::sync::Arc::new(store), super::$rule).await;
                }
            )*
        }
    };
}

contract!(
    priority_order,
    oldest_first_within_a_priority,
    prefers_resident_circuits_within_the_highest_priority,
    deadline_passed_is_expired_not_taken,
    expired_lease_is_taken_again_by_another_worker,
    completes_exactly_once,
    failure_is_recorded,
    cancel_queued,
    cancel_running,
    unknown_circuit,
    circuits_register_once,
    duplicate_job_id,
    depth_counts,
    changed_wakes_a_watcher,
    abandoned_three_times_is_failed,
    eight_workers_complete_each_job_once,
    purge_forgets_settled_jobs_only,
);

fn circuit(name: &str, digest: u8) -> CircuitRecord {
    CircuitRecord { name: name.to_string(), digest: [digest; 32], package: vec![digest; 1000] }
}

fn new_job(circuit: &str, priority: Priority) -> NewJob {
    let id = Uuid::new_v4();
    NewJob { id, circuit: circuit.to_string(), priority, deadline: None, witness: id.as_bytes().to_vec() }
}

async fn submit(store: &Store, circuit: &str, priority: Priority) -> JobId {
    let job = new_job(circuit, priority);
    let id = job.id;
    store.submit(job).await.expect("submit");
    id
}

/// A store with circuits `a` and `b` registered.
async fn with_circuits(store: &Store) {
    store.put_circuit(circuit("a", 1)).await.expect("put a");
    store.put_circuit(circuit("b", 2)).await.expect("put b");
}

fn proved(job: JobId) -> Outcome {
    Outcome::Proved { proof: b"proof".to_vec(), public_inputs: job.as_bytes().to_vec(), timeline: b"[]".to_vec() }
}

async fn take_one(store: &Store, worker: &str, prefer: &[&str]) -> Option<Lease> {
    let prefer: Vec<String> = prefer.iter().map(|s| s.to_string()).collect();
    let mut leases = store.take(worker, &prefer, LONG, 1).await.expect("take");
    assert!(leases.len() <= 1);
    leases.pop()
}

async fn state(store: &Store, job: JobId) -> JobState {
    store.job(job).await.expect("job").expect("a known job").state
}

async fn priority_order(store: Store) {
    with_circuits(&store).await;
    // One at a time...
    let mut submitted = Vec::new();
    for priority in [Priority::Normal, Priority::Low, Priority::Urgent, Priority::High] {
        submitted.push((priority, submit(&store, "a", priority).await));
    }
    submitted.sort_by_key(|&(priority, _)| std::cmp::Reverse(priority));
    for (priority, job) in submitted {
        let lease = take_one(&store, "w", &[]).await.expect("a job");
        assert_eq!((lease.priority, lease.job), (priority, job));
    }
    assert!(take_one(&store, "w", &[]).await.is_none());
    // ...and several at once.
    let low = submit(&store, "b", Priority::Low).await;
    let urgent = submit(&store, "a", Priority::Urgent).await;
    let normal = submit(&store, "b", Priority::Normal).await;
    let leases = store.take("w", &[], LONG, 10).await.expect("take");
    let taken: Vec<JobId> = leases.iter().map(|l| l.job).collect();
    assert_eq!(taken, [urgent, normal, low]);
}

async fn oldest_first_within_a_priority(store: Store) {
    with_circuits(&store).await;
    let mut jobs = Vec::new();
    for i in 0..6 {
        jobs.push(submit(&store, if i % 2 == 0 { "a" } else { "b" }, Priority::Normal).await);
    }
    let first = store.take("w", &[], LONG, 2).await.expect("take");
    assert_eq!(first.iter().map(|l| l.job).collect::<Vec<_>>(), jobs[..2]);
    for &job in &jobs[2..] {
        assert_eq!(take_one(&store, "w", &[]).await.expect("a job").job, job);
    }
}

async fn prefers_resident_circuits_within_the_highest_priority(store: Store) {
    with_circuits(&store).await;
    let a_normal = submit(&store, "a", Priority::Normal).await;
    let b_normal = submit(&store, "b", Priority::Normal).await;
    let a_low = submit(&store, "a", Priority::Low).await;
    let b_low = submit(&store, "b", Priority::Low).await;
    let a_high = submit(&store, "a", Priority::High).await;
    // A higher priority beats a resident circuit; within a priority the resident circuit goes
    // first, however new; the others follow oldest first.
    for expected in [a_high, b_normal, a_normal, b_low, a_low] {
        assert_eq!(take_one(&store, "w", &["b"]).await.expect("a job").job, expected);
    }
    // The same order in one take.
    let jobs = [
        submit(&store, "a", Priority::Normal).await,
        submit(&store, "b", Priority::Normal).await,
        submit(&store, "a", Priority::Low).await,
        submit(&store, "b", Priority::Low).await,
        submit(&store, "a", Priority::High).await,
    ];
    let leases = store.take("w", &["b".to_string()], LONG, 5).await.expect("take");
    let taken: Vec<JobId> = leases.iter().map(|l| l.job).collect();
    assert_eq!(taken, [jobs[4], jobs[1], jobs[0], jobs[3], jobs[2]]);
}

async fn deadline_passed_is_expired_not_taken(store: Store) {
    with_circuits(&store).await;
    let now = SystemTime::now();
    let mut past = new_job("a", Priority::Urgent);
    past.deadline = Some(now - Duration::from_secs(1));
    let mut soon = new_job("a", Priority::Urgent);
    soon.deadline = Some(now + Duration::from_millis(300));
    let mut far = new_job("a", Priority::Low);
    far.deadline = Some(now + Duration::from_secs(3600));
    let given = far.deadline.expect("a deadline");
    let (past, soon, far) = {
        let ids = (past.id, soon.id, far.id);
        for job in [past, soon, far] {
            store.submit(job).await.expect("submit");
        }
        ids
    };
    let none = submit(&store, "b", Priority::Low).await;
    tokio::time::sleep(Duration::from_millis(600)).await;

    let taken: Vec<JobId> = store.take("w", &[], LONG, 10).await.expect("take").iter().map(|l| l.job).collect();
    assert_eq!(taken, [far, none]);
    for job in [past, soon] {
        let record = store.job(job).await.expect("job").expect("known");
        assert_eq!(record.state, JobState::Expired);
        assert!(record.finished.is_some() && record.worker.is_none() && record.attempts == 0);
    }
    // Deadlines are kept as given (to the microsecond: PostgreSQL's resolution).
    let kept = store.job(far).await.expect("job").expect("known").deadline.expect("a deadline");
    let gap = kept.duration_since(given).unwrap_or_else(|e| e.duration());
    assert!(gap < Duration::from_millis(1), "deadline {kept:?} kept for {given:?}");
    assert_eq!(store.depth().await.expect("depth").queued, [0; 4]);
}

async fn expired_lease_is_taken_again_by_another_worker(store: Store) {
    with_circuits(&store).await;
    let job = submit(&store, "a", Priority::Normal).await;
    let first = store.take("w1", &[], SHORT, 1).await.expect("take");
    assert_eq!(first.len(), 1);
    assert_eq!((first[0].job, first[0].attempt), (job, 1));
    assert_eq!(*first[0].witness, job.as_bytes());
    // A live lease is nobody else's.
    assert!(store.take("w2", &[], LONG, 1).await.expect("take").is_empty());
    assert_eq!(store.renew("w2", &[job], LONG).await.expect("renew"), Vec::<JobId>::new());

    tokio::time::sleep(PAST_SHORT).await;
    let second = store.take("w2", &[], LONG, 1).await.expect("take");
    assert_eq!(second.len(), 1);
    assert_eq!((second[0].job, second[0].attempt, second[0].witness.as_slice()), (job, 2, job.as_bytes().as_slice()));
    // The first worker has lost it: its renewal does not list it, its completion is refused.
    assert_eq!(store.renew("w1", &[job], LONG).await.expect("renew"), Vec::<JobId>::new());
    assert!(!store.complete("w1", job, proved(job)).await.expect("complete"));
    assert_eq!(store.renew("w2", &[job], LONG).await.expect("renew"), [job]);
    assert!(store.complete("w2", job, proved(job)).await.expect("complete"));
    let record = store.job(job).await.expect("job").expect("known");
    assert_eq!((record.state, record.worker.as_deref(), record.attempts), (JobState::Succeeded, Some("w2"), 2));
}

async fn completes_exactly_once(store: Store) {
    with_circuits(&store).await;
    let job = submit(&store, "a", Priority::Normal).await;
    assert!(!store.complete("w", job, proved(job)).await.expect("complete"), "completed while queued");
    let lease = take_one(&store, "w", &[]).await.expect("a job");
    assert!(!store.complete("other", job, proved(job)).await.expect("complete"), "completed by a non-holder");
    let running = store.job(job).await.expect("job").expect("known");
    assert_eq!((running.state, running.worker.as_deref()), (JobState::Running, Some("w")));
    assert!(running.started.is_some() && running.finished.is_none() && running.outcome.is_none());

    assert!(store.complete("w", lease.job, proved(job)).await.expect("complete"));
    assert!(!store.complete("w", job, proved(Uuid::nil())).await.expect("complete"), "completed twice");
    let failed = Outcome::Failed { code: "late".into(), message: "too late".into() };
    assert!(!store.complete("w", job, failed).await.expect("complete"), "settled twice");
    assert!(!store.complete("w", Uuid::new_v4(), proved(job)).await.expect("complete"), "an unknown job");

    let record = store.job(job).await.expect("job").expect("known");
    assert_eq!(record.state, JobState::Succeeded);
    assert_eq!(record.outcome, Some(proved(job)), "the first outcome stays");
    assert!(record.finished.is_some());
    assert_eq!(store.renew("w", &[job], LONG).await.expect("renew"), Vec::<JobId>::new());
    assert!(store.take("w", &[], LONG, 5).await.expect("take").is_empty());
}

async fn failure_is_recorded(store: Store) {
    with_circuits(&store).await;
    let job = submit(&store, "b", Priority::High).await;
    take_one(&store, "w", &[]).await.expect("a job");
    let outcome = Outcome::Failed { code: "unsatisfied".into(), message: "constraint 7 fails".into() };
    assert!(store.complete("w", job, outcome.clone()).await.expect("complete"));
    let record = store.job(job).await.expect("job").expect("known");
    assert_eq!((record.state, record.outcome), (JobState::Failed, Some(outcome)));
    assert_eq!(store.job(Uuid::new_v4()).await.expect("job"), None);
}

async fn cancel_queued(store: Store) {
    with_circuits(&store).await;
    let job = submit(&store, "a", Priority::Urgent).await;
    let other = submit(&store, "a", Priority::Low).await;
    assert_eq!(store.cancel(job).await.expect("cancel"), Some(JobState::Cancelled));
    assert_eq!(take_one(&store, "w", &[]).await.expect("a job").job, other, "a cancelled job is never taken");
    assert!(take_one(&store, "w", &[]).await.is_none());
    assert_eq!(state(&store, job).await, JobState::Cancelled);
    assert_eq!(store.cancel(job).await.expect("cancel"), Some(JobState::Cancelled));
    assert_eq!(store.cancel(Uuid::new_v4()).await.expect("cancel"), None);
}

async fn cancel_running(store: Store) {
    with_circuits(&store).await;
    let job = submit(&store, "a", Priority::Normal).await;
    let kept = submit(&store, "a", Priority::Normal).await;
    let leases = store.take("w", &[], LONG, 2).await.expect("take");
    assert_eq!(leases.len(), 2);
    assert_eq!(store.cancel(job).await.expect("cancel"), Some(JobState::Cancelled));
    // The worker learns it from its heartbeat, and its result is not wanted.
    assert_eq!(store.renew("w", &[job, kept], LONG).await.expect("renew"), [kept]);
    assert!(!store.complete("w", job, proved(job)).await.expect("complete"));
    assert_eq!(state(&store, job).await, JobState::Cancelled);
    // A settled job keeps its own state.
    assert!(store.complete("w", kept, proved(kept)).await.expect("complete"));
    assert_eq!(store.cancel(kept).await.expect("cancel"), Some(JobState::Succeeded));
    assert_eq!(store.depth().await.expect("depth"), Depth::default());
}

async fn unknown_circuit(store: Store) {
    with_circuits(&store).await;
    let job = new_job("nope", Priority::Normal);
    let id = job.id;
    match store.submit(job).await {
        Err(StoreError::UnknownCircuit(name)) => assert_eq!(name, "nope"),
        other => panic!("submitting a job of an unknown circuit: {other:?}"),
    }
    assert_eq!(store.job(id).await.expect("job"), None);
    assert_eq!(store.circuit("nope").await.expect("circuit"), None);
}

async fn circuits_register_once(store: Store) {
    let before = SystemTime::now() - Duration::from_secs(60);
    store.put_circuit(circuit("a", 1)).await.expect("put");
    store.put_circuit(circuit("a", 1)).await.expect("the same again is a no-op");
    match store.put_circuit(circuit("a", 9)).await {
        Err(StoreError::CircuitConflict(name)) => assert_eq!(name, "a"),
        other => panic!("registering another package under a taken name: {other:?}"),
    }
    store.put_circuit(CircuitRecord { package: vec![7; 10], ..circuit("b", 2) }).await.expect("put");
    assert_eq!(store.circuit("a").await.expect("circuit"), Some(circuit("a", 1)));
    let all = store.circuits().await.expect("circuits");
    let listed: Vec<(&str, [u8; 32], u64)> = all.iter().map(|c| (c.name.as_str(), c.digest, c.package_bytes)).collect();
    assert_eq!(listed, [("a", [1; 32], 1000), ("b", [2; 32], 10)]);
    assert!(all.iter().all(|c| c.registered > before));
}

async fn duplicate_job_id(store: Store) {
    with_circuits(&store).await;
    let job = new_job("a", Priority::Normal);
    store.submit(job.clone()).await.expect("submit");
    let again = NewJob { circuit: "b".into(), priority: Priority::Urgent, ..job.clone() };
    match store.submit(again).await {
        Err(StoreError::DuplicateJob(id)) => assert_eq!(id, job.id),
        other => panic!("submitting a job id twice: {other:?}"),
    }
    let record = store.job(job.id).await.expect("job").expect("known");
    assert_eq!((record.circuit.as_str(), record.priority), ("a", Priority::Normal));
    assert_eq!(store.depth().await.expect("depth").queued, [0, 1, 0, 0]);
}

async fn depth_counts(store: Store) {
    with_circuits(&store).await;
    assert_eq!(store.depth().await.expect("depth"), Depth::default());
    let low = [submit(&store, "a", Priority::Low).await, submit(&store, "b", Priority::Low).await];
    submit(&store, "a", Priority::Normal).await;
    for _ in 0..3 {
        submit(&store, "b", Priority::Urgent).await;
    }
    assert_eq!(store.depth().await.expect("depth"), Depth { queued: [2, 1, 0, 3], running: 0 });
    let leases = store.take("w", &[], LONG, 2).await.expect("take");
    assert_eq!(store.depth().await.expect("depth"), Depth { queued: [2, 1, 0, 1], running: 2 });
    assert!(store.complete("w", leases[0].job, proved(leases[0].job)).await.expect("complete"));
    store.cancel(low[0]).await.expect("cancel");
    assert_eq!(store.depth().await.expect("depth"), Depth { queued: [1, 1, 0, 1], running: 1 });
}

/// Waits in `changed` on another task; returns how long the wait took.
fn watch(store: &Store, job: JobId, timeout: Duration) -> tokio::task::JoinHandle<Duration> {
    let store = Arc::clone(store);
    tokio::spawn(async move {
        let started = Instant::now();
        store.changed(job, timeout).await;
        started.elapsed()
    })
}

async fn changed_wakes_a_watcher(store: Store) {
    with_circuits(&store).await;
    let job = submit(&store, "a", Priority::Normal).await;
    let patient = Duration::from_secs(30);
    // Taken...
    let watcher = watch(&store, job, patient);
    tokio::time::sleep(Duration::from_millis(300)).await;
    take_one(&store, "w", &[]).await.expect("a job");
    let waited = tokio::time::timeout(Duration::from_secs(10), watcher).await.expect("woken").expect("the watcher");
    assert!(waited < Duration::from_secs(10), "woken only after {waited:?}");
    // ...completed...
    let watcher = watch(&store, job, patient);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(store.complete("w", job, proved(job)).await.expect("complete"));
    let waited = tokio::time::timeout(Duration::from_secs(10), watcher).await.expect("woken").expect("the watcher");
    assert!(waited < Duration::from_secs(10), "woken only after {waited:?}");
    // ...and settled: nothing to wait for.
    let waited = tokio::time::timeout(Duration::from_secs(5), watch(&store, job, patient)).await.expect("returned");
    assert!(waited.expect("the watcher") < Duration::from_secs(5));
    // Nothing happens: back by the timeout.
    let quiet = submit(&store, "a", Priority::Normal).await;
    let waited = tokio::time::timeout(Duration::from_secs(10), watch(&store, quiet, Duration::from_millis(300)))
        .await
        .expect("returned by its timeout")
        .expect("the watcher");
    assert!(waited < Duration::from_secs(5));
}

async fn abandoned_three_times_is_failed(store: Store) {
    with_circuits(&store).await;
    let job = submit(&store, "a", Priority::Normal).await;
    let bystander = submit(&store, "a", Priority::Low).await;
    for attempt in 1..=MAX_ATTEMPTS {
        let leases = store.take(&format!("w{attempt}"), &[], SHORT, 1).await.expect("take");
        assert_eq!(leases.iter().map(|l| (l.job, l.attempt)).collect::<Vec<_>>(), [(job, attempt)]);
        tokio::time::sleep(PAST_SHORT).await;
    }
    // The third lease expired too: the job is failed, the next job is handed out instead.
    let next = store.take("w4", &[], LONG, 5).await.expect("take");
    assert_eq!(next.iter().map(|l| l.job).collect::<Vec<_>>(), [bystander]);
    let record = store.job(job).await.expect("job").expect("known");
    assert_eq!(record.state, JobState::Failed);
    assert_eq!(record.attempts, MAX_ATTEMPTS);
    match record.outcome {
        Some(Outcome::Failed { code, .. }) => assert_eq!(code, ATTEMPTS_EXHAUSTED),
        other => panic!("the outcome of a job abandoned {MAX_ATTEMPTS} times: {other:?}"),
    }
    assert!(!store.complete("w3", job, proved(job)).await.expect("complete"));
}

async fn eight_workers_complete_each_job_once(store: Store) {
    const JOBS: usize = 300;
    const WORKERS: usize = 8;
    with_circuits(&store).await;
    store.put_circuit(circuit("c", 3)).await.expect("put c");
    let circuits = ["a", "b", "c"];
    let mut submitted = HashSet::new();
    for i in 0..JOBS {
        submitted.insert(submit(&store, circuits[i % 3], Priority::ALL[i % 4]).await);
    }
    let completed = Arc::new(Mutex::new(Vec::new()));
    let mut workers = Vec::new();
    for w in 0..WORKERS {
        let store = Arc::clone(&store);
        let completed = Arc::clone(&completed);
        workers.push(tokio::spawn(async move {
            let worker = format!("worker-{w}");
            let prefer = [circuits[w % 3].to_string()];
            loop {
                let leases = store.take(&worker, &prefer, LONG, 1 + w % 4).await.expect("take");
                if leases.is_empty() {
                    // Every job was queued before the workers started and no lease expires:
                    // an empty take means the line is empty.
                    return;
                }
                for lease in leases {
                    assert_eq!(lease.attempt, 1, "{} taken twice", lease.job);
                    assert!(store.complete(&worker, lease.job, proved(lease.job)).await.expect("complete"));
                    completed.lock().unwrap().push(lease.job);
                }
            }
        }));
    }
    for worker in workers {
        worker.await.expect("a worker");
    }
    let completed = completed.lock().unwrap().clone();
    assert_eq!(completed.len(), JOBS, "completions");
    assert_eq!(completed.iter().copied().collect::<HashSet<_>>(), submitted, "each job completed once");
    assert_eq!(store.depth().await.expect("depth"), Depth::default());
    for job in submitted {
        assert_eq!(state(&store, job).await, JobState::Succeeded);
    }
}

async fn purge_forgets_settled_jobs_only(store: Store) {
    with_circuits(&store).await;
    let done = submit(&store, "a", Priority::Normal).await;
    let running = submit(&store, "a", Priority::Normal).await;
    let queued = submit(&store, "a", Priority::Low).await;
    let first = take_one(&store, "w", &[]).await.unwrap();
    let second = take_one(&store, "w", &[]).await.unwrap();
    let (finished, still) = if first.job == done { (first, second) } else { (second, first) };
    assert!(store.complete("w", finished.job, proved(finished.job)).await.unwrap());
    assert_eq!(still.job, running);
    // Nothing finished before a moment ago.
    assert_eq!(store.purge(SystemTime::now() - Duration::from_secs(60)).await.unwrap(), 0);
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(store.purge(SystemTime::now() + Duration::from_secs(1)).await.unwrap(), 1);
    assert!(store.job(done).await.unwrap().is_none());
    assert_eq!(state(&store, running).await, JobState::Running);
    assert_eq!(state(&store, queued).await, JobState::Queued);
}
