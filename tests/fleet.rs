//! Three `g16 serve` processes sharing one real PostgreSQL (a throw-away cluster): load from
//! many clients with mixed priorities, a server killed with jobs in hand, the database
//! restarted under load, a client that leaves mid-upload. Every job completes exactly once and
//! every proof verifies.

mod server;

use std::sync::Arc;
use std::time::{Duration, Instant};

use g16_client::tonic::Code;
use g16_client::{proto, Priority, ProveOptions, WitnessFormat};
use g16_queue::testing::TempPostgres;
use g16_queue::{CircuitRecord, JobId, JobState, JobStore, NewJob, PgStore};
use server::{small_vk, small_wtns, small_zkey, verify, Server};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

fn fleet(url: &str, lease_secs: &str) -> Vec<Server> {
    (0..3)
        .map(|i| Server::start(&["--queue", url, "--lease-secs", lease_secs, "--worker", &format!("server-{i}")]))
        .collect()
}

/// The small circuit's witness, raw, as the store keeps it.
fn small_raw() -> Vec<u8> {
    let z = g16::circom::read_wtns(&small_wtns()).unwrap();
    g16_service::witness::to_raw(&z)
}

#[test]
fn load_from_many_clients_completes_every_job_once_in_priority_order() {
    let Some(pg) = TempPostgres::start_or_skip() else { return };
    let rt = runtime();
    let url = pg.url().to_string();
    // 200 jobs queued before any server runs, a quarter of each priority, interleaved: the
    // fleet must take them by priority.
    let queued: Vec<(JobId, Priority)> = rt.block_on(async {
        let store = PgStore::connect(&url).await.unwrap();
        let package = g16_service::package::encode(proto::PackageKind::Zkey, 0, &small_zkey());
        let digest = g16::key_store::digest_bytes(&package);
        store.put_circuit(CircuitRecord { name: "small".into(), digest, package }).await.unwrap();
        let mut jobs = Vec::new();
        for i in 0..200 {
            let priority = g16_queue::Priority::ALL[i % 4];
            let id = JobId::new_v4();
            let job = NewJob { id, circuit: "small".into(), priority, deadline: None, witness: small_raw() };
            store.submit(job).await.unwrap();
            jobs.push((id, [Priority::Low, Priority::Normal, Priority::High, Priority::Urgent][i % 4]));
        }
        jobs
    });
    let servers = fleet(&url, "5");
    let grpc: Vec<String> = servers.iter().map(|s| s.grpc.clone()).collect();
    let vk = Arc::new(small_vk());

    // 32 clients, 10 jobs each, submitted to one server and awaited on another.
    let started = Instant::now();
    let sent: Vec<String> = rt.block_on(async {
        let mut tasks = Vec::new();
        for c in 0..32usize {
            let (to, from) = (grpc[c % 3].clone(), grpc[(c + 1) % 3].clone());
            let vk = Arc::clone(&vk);
            tasks.push(tokio::spawn(async move {
                let mut submit = g16_client::Client::connect(&to, None).await.unwrap();
                let mut wait = g16_client::Client::connect(&from, None).await.unwrap();
                let mut ids = Vec::new();
                for j in 0..10usize {
                    let priority = [Priority::Low, Priority::Normal, Priority::High, Priority::Urgent][(c + j) % 4];
                    let options = ProveOptions { priority, ..Default::default() };
                    ids.push(submit.prove_wtns("small", &small_wtns(), options).await.unwrap());
                }
                for id in &ids {
                    let result = wait.await_job(id).await.unwrap();
                    assert!(verify(&vk, &result), "job {id}'s proof does not verify");
                }
                ids
            }));
        }
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await.unwrap());
        }
        all
    });
    assert_eq!(sent.len(), 320);
    eprintln!(
        "320 jobs from 32 clients on 3 servers (and 200 queued before) in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    rt.block_on(async {
        let store = PgStore::connect(&url).await.unwrap();
        let mut finished: [Vec<f64>; 4] = Default::default();
        let t0 = std::time::SystemTime::UNIX_EPOCH;
        for (id, priority) in &queued {
            let record = store.job(*id).await.unwrap().unwrap();
            assert_eq!(record.state, JobState::Succeeded, "job {id}");
            assert_eq!(record.attempts, 1, "job {id} was taken twice without a fault");
            let mut client = g16_client::Client::connect(&grpc[0], None).await.unwrap();
            assert!(verify(&vk, &client.await_job(&id.to_string()).await.unwrap()));
            let at = record.finished.unwrap().duration_since(t0).unwrap().as_secs_f64();
            finished[*priority as usize].push(at);
        }
        // Priority enum order: normal 0, low 1, high 2, urgent 3.
        let mean = |v: &Vec<f64>| v.iter().sum::<f64>() / v.len() as f64;
        let (low, normal, high, urgent) = (
            mean(&finished[Priority::Low as usize]),
            mean(&finished[Priority::Normal as usize]),
            mean(&finished[Priority::High as usize]),
            mean(&finished[Priority::Urgent as usize]),
        );
        eprintln!(
            "mean finish, s after the first: urgent 0, high {:.3}, normal {:.3}, low {:.3}",
            high - urgent,
            normal - urgent,
            low - urgent
        );
        assert!(urgent < high && high < normal && normal < low, "higher priorities finish first on average");
    });
    // Exactly once: the servers settled 520 jobs between them, no more.
    let settled: f64 = servers.iter().map(|s| s.metric("g16_jobs_settled_total{state=\"succeeded\"}")).sum();
    assert_eq!(settled, 520.0);
}

#[test]
fn a_killed_server_a_restarted_database_and_a_lost_client_lose_nothing() {
    let Some(pg) = TempPostgres::start_or_skip() else { return };
    let rt = runtime();
    let url = pg.url().to_string();
    // Jobs that take a while on the CPU (poseidon 2^12), queued before any server runs, so
    // the first server holds some when it is killed.
    let (circuit, key, z, pk) = server::compiled_package(12);
    let heavy: Vec<String> = rt.block_on(async {
        let store = PgStore::connect(&url).await.unwrap();
        let mut bytes = circuit.clone();
        bytes.extend_from_slice(&key);
        let package = g16_service::package::encode(proto::PackageKind::Compiled, circuit.len() as u64, &bytes);
        let digest = g16::key_store::digest_bytes(&package);
        store.put_circuit(CircuitRecord { name: "poseidon-12".into(), digest, package }).await.unwrap();
        let mut ids = Vec::new();
        for _ in 0..40 {
            let id = JobId::new_v4();
            let witness = g16_service::witness::to_raw(&z);
            let job = NewJob {
                id,
                circuit: "poseidon-12".into(),
                priority: g16_queue::Priority::Normal,
                deadline: None,
                witness,
            };
            store.submit(job).await.unwrap();
            ids.push(id.to_string());
        }
        ids
    });
    let lease = "2";
    let mut servers = vec![Server::start(&["--queue", &url, "--lease-secs", lease, "--worker", "server-0"])];
    let vk = small_vk();
    rt.block_on(async {
        let store = PgStore::connect(&url).await.unwrap();
        let held_by = |worker: &'static str| {
            let (store, heavy) = (&store, &heavy);
            async move {
                let mut held = Vec::new();
                for id in heavy {
                    let r = store.job(JobId::parse_str(id).unwrap()).await.unwrap().unwrap();
                    if r.state == JobState::Running && r.worker.as_deref() == Some(worker) {
                        held.push(id.clone());
                    }
                }
                held
            }
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while held_by("server-0").await.is_empty() {
            assert!(Instant::now() < deadline, "server-0 never took a job");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        servers[0].kill();
        // What it held when it died (it may have finished some between the look and the kill).
        let held_by_0 = held_by("server-0").await;
        eprintln!("server-0 killed holding {} jobs", held_by_0.len());
        assert!(!held_by_0.is_empty(), "server-0 finished what it held before it was killed");
        servers.push(Server::start(&["--queue", &url, "--lease-secs", lease, "--worker", "server-1"]));
        servers.push(Server::start(&["--queue", &url, "--lease-secs", lease, "--worker", "server-2"]));

        // More work, then the database restarts under load; the servers reconnect.
        let mut c1 = servers[1].client().await;
        c1.register_zkey("small", &small_zkey()).await.unwrap();
        let mut more = Vec::new();
        for _ in 0..30 {
            more.push(c1.prove_wtns("small", &small_wtns(), ProveOptions::default()).await.unwrap());
        }
        pg.restart().unwrap();
        let mut c2 = servers[2].client().await;
        let mut late = Vec::new();
        let until = Instant::now() + Duration::from_secs(30);
        while late.len() < 20 {
            match c2.prove_wtns("small", &small_wtns(), ProveOptions::default()).await {
                Ok(id) => late.push(id),
                Err(e) if Instant::now() < until => {
                    // Refused while the database was away, with a status that says so.
                    let g16_client::ClientError::Status(s) = e else { panic!("{e}") };
                    assert_eq!(s.code(), Code::Unavailable, "{s:?}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("the fleet did not come back after the restart: {e}"),
            }
        }

        // Every job completes (those server-0 held, within their lease, on another server) and
        // verifies.
        let waited = Instant::now();
        let mut retaken = 0;
        for id in &heavy {
            let result = tokio::time::timeout(Duration::from_secs(120), c2.await_job(id))
                .await
                .unwrap_or_else(|_| panic!("job {id} never finished"))
                .unwrap_or_else(|e| panic!("job {id}: {e}"));
            assert!(verify(pk.verifying_key(), &result), "job {id}");
            if held_by_0.contains(id) {
                assert!(result.attempts >= 2 && result.worker != "server-0", "{result:?}");
                retaken += 1;
            }
        }
        assert_eq!(retaken, held_by_0.len());
        for id in more.iter().chain(&late) {
            let result = tokio::time::timeout(Duration::from_secs(60), c2.await_job(id))
                .await
                .unwrap_or_else(|_| panic!("job {id} never finished"))
                .unwrap_or_else(|e| panic!("job {id}: {e}"));
            assert!(verify(&vk, &result), "job {id}");
        }
        eprintln!(
            "{} jobs complete {:.1} s after the restart; {retaken} retaken from the killed server",
            heavy.len() + more.len() + late.len(),
            waited.elapsed().as_secs_f64()
        );

        // A client that leaves mid-upload: no job, no witness bytes left behind.
        let depth_before = store.depth().await.unwrap();
        let header = proto::ProveHeader {
            circuit: "small".into(),
            witness_bytes: 5 * 32,
            format: WitnessFormat::Raw.into(),
            ..Default::default()
        };
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        tx.send(proto::ProveChunk { part: Some(proto::prove_chunk::Part::Header(header)) }).await.unwrap();
        tx.send(proto::ProveChunk { part: Some(proto::prove_chunk::Part::Data(vec![1u8; 64].into())) }).await.unwrap();
        let mut raw = c2.clone();
        let call = tokio::spawn(async move { raw.raw().prove(tokio_stream::wrappers::ReceiverStream::new(rx)).await });
        tokio::time::sleep(Duration::from_millis(300)).await;
        call.abort();
        drop(tx);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(store.depth().await.unwrap(), depth_before, "no job from an abandoned upload");
        let status = c2.status().await.unwrap();
        assert_eq!(status.witness_bytes_in_flight, 0, "the abandoned upload's budget came back");
    });
}
