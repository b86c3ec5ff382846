//! What only `PgStore` promises: its schema applied once however many servers start together,
//! `Unavailable` (not a panic, not a hang) while the database is down and service again once it
//! is back, witnesses dropped when their job settles, and job changes heard from other servers.

use std::time::{Duration, Instant};

use g16_queue::testing::TempPostgres;
use g16_queue::{CircuitRecord, JobId, JobState, JobStore, NewJob, Outcome, PgStore, Priority, StoreError, Uuid};
use tokio::time::timeout;

/// No test takes longer; a store that hangs fails instead.
const LIMIT: Duration = Duration::from_secs(90);
const LONG: Duration = Duration::from_secs(60);

async fn connect(url: &str) -> PgStore {
    timeout(LIMIT, PgStore::connect(url)).await.expect("connecting timed out").expect("connecting")
}

async fn queue_one(store: &PgStore) -> JobId {
    store.put_circuit(CircuitRecord { name: "c".into(), digest: [3; 32], package: vec![3; 64] }).await.expect("put");
    let id = Uuid::new_v4();
    let job = NewJob { id, circuit: "c".into(), priority: Priority::Normal, deadline: None, witness: vec![1, 2, 3] };
    store.submit(job).await.expect("submit");
    id
}

fn proved() -> Outcome {
    Outcome::Proved { proof: vec![1], public_inputs: vec![2], timeline: Vec::new() }
}

async fn sql_client(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.expect("a SQL connection");
    tokio::spawn(connection);
    client
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrations_apply_once_however_many_servers_start() {
    let Some(cluster) = TempPostgres::start_or_skip() else { return };
    let url = cluster.create_database("fleet").expect("a database");
    let starts: Vec<_> = (0..4)
        .map(|_| {
            let url = url.clone();
            tokio::spawn(async move { PgStore::connect(&url).await.map(drop) })
        })
        .collect();
    for start in starts {
        timeout(LIMIT, start).await.expect("in time").expect("the task").expect("a server starts");
    }
    drop(connect(&url).await);
    let migrations = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations")).expect("migrations").count();
    let client = sql_client(&url).await;
    let applied: i64 =
        client.query_one("SELECT count(*) FROM g16_migrations", &[]).await.expect("g16_migrations").get(0);
    assert_eq!(applied, migrations as i64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unavailable_while_down_and_back_after_a_restart() {
    let Some(cluster) = TempPostgres::start_or_skip() else { return };
    let store = connect(cluster.url()).await;
    let job = queue_one(&store).await;

    cluster.stop().expect("stopping the server");
    let started = Instant::now();
    let down = timeout(LIMIT, async {
        assert!(matches!(store.depth().await, Err(StoreError::Unavailable(_))));
        assert!(matches!(store.take("w", &[], LONG, 1).await, Err(StoreError::Unavailable(_))));
        assert!(matches!(store.job(job).await, Err(StoreError::Unavailable(_))));
        assert!(matches!(store.complete("w", job, proved()).await, Err(StoreError::Unavailable(_))));
        store.changed(job, Duration::from_secs(30)).await;
    })
    .await;
    down.expect("calls fail rather than hang while the database is down");
    assert!(started.elapsed() < Duration::from_secs(30), "failing took {:?}", started.elapsed());

    cluster.resume().expect("starting the server again");
    // The same store, at once: the pool replaced the connections the restart broke.
    let depth = timeout(LIMIT, store.depth()).await.expect("in time").expect("depth after the restart");
    assert_eq!(depth.queued, [0, 1, 0, 0]);
    let leases = store.take("w", &[], LONG, 1).await.expect("take after the restart");
    assert_eq!(leases.iter().map(|l| l.job).collect::<Vec<_>>(), [job]);

    // Watchers hear changes again once the listening connection is back (polling meanwhile).
    let watcher = {
        let store = std::sync::Arc::new(store);
        let watching = std::sync::Arc::clone(&store);
        let handle = tokio::spawn(async move { watching.changed(job, Duration::from_secs(30)).await });
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(store.complete("w", job, proved()).await.expect("complete after the restart"));
        handle
    };
    timeout(Duration::from_secs(10), watcher).await.expect("the watcher woke").expect("the watcher");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_database_is_unavailable() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("a port").local_addr().expect("its address").port();
    // Nothing listens there now (the probe's socket is closed).
    let url = format!("postgres://postgres@127.0.0.1:{port}/g16");
    match timeout(LIMIT, PgStore::connect(&url)).await.expect("in time") {
        Err(StoreError::Unavailable(_)) => {}
        Err(e) => panic!("connecting to nothing: {e}"),
        Ok(_) => panic!("connected to nothing"),
    }
    assert!(matches!(PgStore::connect("not a url").await, Err(StoreError::Unavailable(_))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn witnesses_are_dropped_when_jobs_settle() {
    let Some(cluster) = TempPostgres::start_or_skip() else { return };
    let store = connect(cluster.url()).await;
    let client = sql_client(cluster.url()).await;
    let witnesses =
        || async { client.query_one("SELECT count(*) FROM witnesses", &[]).await.expect("count").get::<_, i64>(0) };
    let proved_job = queue_one(&store).await;
    let cancelled = queue_one(&store).await;
    let running = queue_one(&store).await;
    assert_eq!(witnesses().await, 3);
    let taken = store.take("w", &[], LONG, 3).await.expect("take");
    assert_eq!(taken.len(), 3);
    assert!(store.complete("w", proved_job, proved()).await.expect("complete"));
    assert_eq!(store.cancel(cancelled).await.expect("cancel"), Some(JobState::Cancelled));
    // The running job still needs its witness (another worker may take it again).
    assert_eq!(witnesses().await, 1);
    assert_eq!(store.cancel(running).await.expect("cancel"), Some(JobState::Cancelled));
    assert_eq!(witnesses().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_made_by_another_server_are_heard() {
    let Some(cluster) = TempPostgres::start_or_skip() else { return };
    let here = std::sync::Arc::new(connect(cluster.url()).await);
    let there = connect(cluster.url()).await;
    let job = queue_one(&there).await;
    // Let the listening connection come up: its arrival wakes every watcher.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let short = Duration::from_secs(1);
    assert_eq!(there.take("w1", &[], short, 1).await.expect("take").len(), 1);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    // Taken again by another worker: the state stays `running`, so only a notification (not a
    // poll of the state) wakes the watcher.
    let watching = std::sync::Arc::clone(&here);
    let watcher = tokio::spawn(async move {
        let started = Instant::now();
        watching.changed(job, Duration::from_secs(30)).await;
        started.elapsed()
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let again = there.take("w2", &[], LONG, 1).await.expect("take");
    assert_eq!(again.iter().map(|l| (l.job, l.attempt)).collect::<Vec<_>>(), [(job, 2)]);
    let waited = timeout(Duration::from_secs(10), watcher).await.expect("woken").expect("the watcher");
    assert!(waited < Duration::from_secs(10));
}
