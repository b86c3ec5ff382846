//! `g16 serve` as a real process on loopback (CPU backend, queue in memory): registration,
//! proofs verified by arkworks, watching, timelines, metrics, bad requests, tokens, draining.

mod server;

use std::time::Duration;

use g16::Fr;
use g16_client::proto::{self, JobState};
use g16_client::tonic::Code;
use g16_client::{Client, Priority, ProveOptions, TimelineFormat, WitnessFormat};
use server::{compiled_package, small_vk, small_wtns, small_zkey, verify, Server};
use tokio_stream::StreamExt;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

fn code(e: g16_client::ClientError) -> (Code, String) {
    match e {
        g16_client::ClientError::Status(s) => (s.code(), s.message().to_string()),
        other => panic!("expected a status, got {other}"),
    }
}

#[test]
fn registers_proves_watches_and_reports() {
    let server = Server::start(&[]);
    runtime().block_on(async {
        let mut client = server.client().await;
        let info = client.register_zkey("small", &small_zkey()).await.unwrap();
        assert_eq!((info.variables, info.public_inputs, info.constraints), (5, 2, 2));
        // The same package again is no change; another package under the name is refused.
        client.register_zkey("small", &small_zkey()).await.unwrap();
        let (circuit, key, z, pk) = compiled_package(8);
        let err = client.register_compiled("small", &circuit, &key).await.unwrap_err();
        assert_eq!(code(err).0, Code::AlreadyExists);

        // circom: three jobs, each verified here by arkworks.
        let vk = small_vk();
        let mut jobs = Vec::new();
        for p in [Priority::Low, Priority::Normal, Priority::Urgent] {
            let options = ProveOptions { priority: p, ..Default::default() };
            jobs.push(client.prove_wtns("small", &small_wtns(), options).await.unwrap());
        }
        for job in &jobs {
            let result = client.await_job(job).await.unwrap();
            assert!(result.verified);
            assert!(verify(&vk, &result), "arkworks rejects job {job}'s proof");
            assert_eq!(result.public_inputs.len(), 2);
            let json: serde_json::Value = serde_json::from_str(&result.proof.unwrap().proof_json).unwrap();
            assert_eq!(json["curve"], "bls12381");
        }

        // A compiled arkworks circuit, its witness sent raw; watched to the end.
        client.register_compiled("poseidon-8", &circuit, &key).await.unwrap();
        let raw = g16_service::witness::to_raw(&z);
        let job = client.prove("poseidon-8", WitnessFormat::Raw, &raw, ProveOptions::default()).await.unwrap();
        let mut events = client.watch(&job).await.unwrap();
        let mut states = Vec::new();
        let mut last = None;
        while let Some(event) = events.next().await {
            let event = event.unwrap();
            states.push(event.state);
            last = event.result.or(last);
        }
        assert_eq!(states.last(), Some(&(JobState::Succeeded as i32)), "{states:?}");
        assert!(verify(pk.verifying_key(), &last.expect("the last event carries the result")));

        // The job's timeline, both formats; the status and the metrics.
        let text = client.timeline(&job, TimelineFormat::Text).await.unwrap();
        assert!(String::from_utf8(text).unwrap().contains("GPU"), "the timeline has the device section");
        let chrome = client.timeline(&job, TimelineFormat::Chrome).await.unwrap();
        let _: serde_json::Value = serde_json::from_slice(&chrome).expect("Chrome trace JSON");
        let status = client.status().await.unwrap();
        assert_eq!(status.queued.iter().sum::<u64>() + status.running, 0);
        assert_eq!(status.devices.len(), 1);
        let mut resident = status.devices[0].resident_circuits.clone();
        resident.sort();
        assert_eq!(resident, ["poseidon-8", "small"]);
        assert_eq!(client.evict("small").await.unwrap(), ["cpu:0"]);
        assert_eq!(client.preload("small").await.unwrap(), ["cpu:0"]);
        let listed: Vec<String> = client.circuits().await.unwrap().into_iter().map(|c| c.name).collect();
        assert_eq!(listed.len(), 2);
    });
    assert_eq!(server.metric("g16_jobs_settled_total{state=\"succeeded\"}"), 4.0);
    assert_eq!(server.metric("g16_proof_latency_seconds_count"), 4.0);
    assert!(server.http_get("/healthz").contains("ok"));
}

/// `g16 client --server <server> ARGS` as a process: whether it succeeded, and what it printed.
fn g16_client(server: &Server, args: &[&str]) -> (bool, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_g16"))
        .args(["client", "--server", &server.grpc])
        .args(args)
        .output()
        .unwrap();
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

/// Each device's resident circuits, from the server's status.
async fn resident(client: &mut Client) -> Vec<String> {
    let status = client.status().await.unwrap();
    let mut names: Vec<String> = status.devices.iter().flat_map(|d| d.resident_circuits.clone()).collect();
    names.sort();
    names
}

/// A registered circuit's key goes to the devices as it is registered, so its first job finds
/// it resident; with `--prepare-on-first-job`, only when a job asks for it.
#[test]
fn registration_prepares_the_key_unless_told_to_leave_it_for_the_first_job() {
    for (flags, prepared) in [(&[][..], true), (&["--prepare-on-first-job"][..], false)] {
        let server = Server::start(flags);
        runtime().block_on(async {
            let mut client = server.client().await;
            client.register_zkey("small", &small_zkey()).await.unwrap();
            // The preparation runs beside the reply: wait for it, within a bound.
            let deadline = std::time::Instant::now() + Duration::from_secs(60);
            while prepared && resident(&mut client).await.is_empty() && std::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            if !prepared {
                // Time a preparation beside the reply would have taken (milliseconds here).
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            let expected: &[&str] = if prepared { &["small"] } else { &[] };
            assert_eq!(resident(&mut client).await, expected, "flags {flags:?}, before any job");
            let job = client.prove_wtns("small", &small_wtns(), ProveOptions::default()).await.unwrap();
            assert!(client.await_job(&job).await.unwrap().verified);
            assert_eq!(resident(&mut client).await, ["small"], "flags {flags:?}, after a job");
        });
    }
}

/// Packages registered from files, each streamed as it is read: the same circuits as from
/// memory (a zkey, a compiled circuit and its key, proved and verified), a missing file named,
/// a cut file refused by the server.
#[test]
fn packages_register_from_files_as_they_are_read() {
    let server = Server::start(&[]);
    let dir = std::env::temp_dir().join(format!("g16-serve-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (circuit, key, z, _) = compiled_package(8);
    let zkey = small_zkey();
    for (name, bytes) in [("small.zkey", &zkey), ("p.circ", &circuit), ("p.key", &key)] {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    std::fs::write(dir.join("cut.zkey"), &zkey[..zkey.len() / 2]).unwrap();
    runtime().block_on(async {
        let mut client = server.client().await;
        let info = client.register_files("small", proto::PackageKind::Zkey, &[dir.join("small.zkey")]).await.unwrap();
        assert_eq!((info.variables, info.public_inputs, info.constraints), (5, 2, 2));
        assert_eq!(info.digest, client.register_zkey("small", &zkey).await.unwrap().digest, "the same package");
        let files = [dir.join("p.circ"), dir.join("p.key")];
        client.register_files("poseidon-8", proto::PackageKind::Compiled, &files).await.unwrap();
        let raw = g16_service::witness::to_raw(&z);
        let job = client.prove("poseidon-8", WitnessFormat::Raw, &raw, ProveOptions::default()).await.unwrap();
        assert!(client.await_job(&job).await.unwrap().verified);
        match client.register_files("gone", proto::PackageKind::Zkey, &[dir.join("gone.zkey")]).await {
            Err(g16_client::ClientError::Io(e)) => assert!(e.to_string().contains("gone.zkey"), "{e}"),
            other => panic!("a missing file: {:?}", other.map(|i| i.name)),
        }
        let (c, m) =
            code(client.register_files("cut", proto::PackageKind::Zkey, &[dir.join("cut.zkey")]).await.unwrap_err());
        assert_eq!(c, Code::InvalidArgument, "{m}");
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// Packages on the server's own disk, registered by path with `g16 client register
/// --on-server`: nothing uploaded, the same package as an upload of the same files (same
/// digest), a compiled circuit proved and verified; paths outside `--package-dir`, missing
/// files and cut files refused plainly.
#[test]
fn packages_register_by_path_on_the_server() {
    let dir = std::env::temp_dir().join(format!("g16-serve-on-server-{}", std::process::id()));
    let packages = dir.join("packages");
    std::fs::create_dir_all(&packages).unwrap();
    let (circuit, key, z, pk) = compiled_package(8);
    let zkey = small_zkey();
    for (name, bytes) in [("small.zkey", &zkey), ("p.circ", &circuit), ("p.key", &key)] {
        std::fs::write(packages.join(name), bytes).unwrap();
    }
    std::fs::write(packages.join("cut.zkey"), &zkey[..zkey.len() / 2]).unwrap();
    std::fs::write(dir.join("outside.zkey"), &zkey).unwrap();
    let server = Server::start(&["--package-dir", packages.to_str().unwrap()]);
    let client = |args: &[&str]| g16_client(&server, &[&["register", "--on-server"], args].concat());
    let (ok, out) = client(&["--name", "small", "--zkey", "small.zkey"]);
    assert!(ok && out.contains("2 public inputs"), "{out}");
    let (ok, out) = client(&["--name", "p", "--compiled", "p.circ", "--key", "p.key"]);
    assert!(ok, "{out}");
    for (args, refusal) in [
        (&["--name", "o", "--zkey", "../outside.zkey"][..], "outside the package directory"),
        (&["--name", "g", "--zkey", "gone.zkey"][..], "gone.zkey"),
        (&["--name", "c", "--zkey", "cut.zkey"][..], "the package"),
        (&["--name", "k", "--compiled", "p.circ", "--key", "../outside.zkey"][..], "outside the package directory"),
    ] {
        let (ok, out) = client(args);
        assert!(!ok && out.contains(refusal), "{args:?}: {out}");
    }
    runtime().block_on(async {
        let mut client = server.client().await;
        // Uploading the same files gives the same package: no change, the same digest.
        let by_path = client.circuits().await.unwrap().into_iter().find(|c| c.name == "small").unwrap();
        assert_eq!(client.register_zkey("small", &zkey).await.unwrap().digest, by_path.digest);
        assert_eq!(
            client.register_compiled("p", &circuit, &key).await.unwrap().digest,
            client.circuits().await.unwrap().into_iter().find(|c| c.name == "p").unwrap().digest
        );
        let raw = g16_service::witness::to_raw(&z);
        let job = client.prove("p", WitnessFormat::Raw, &raw, ProveOptions::default()).await.unwrap();
        let result = client.await_job(&job).await.unwrap();
        assert!(result.verified && verify(pk.verifying_key(), &result));
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_requests_get_precise_statuses_and_leave_the_server_working() {
    let server = Server::start(&[]);
    runtime().block_on(async {
        let mut client = server.client().await;
        client.register_zkey("small", &small_zkey()).await.unwrap();
        let (circuit, key, z, _) = compiled_package(8);
        client.register_compiled("poseidon-8", &circuit, &key).await.unwrap();

        let err = client.prove_wtns("nope", &small_wtns(), ProveOptions::default()).await.unwrap_err();
        assert_eq!(code(err).0, Code::NotFound);
        // A witness of the wrong length: refused at once, naming both lengths.
        let raw = g16_service::witness::to_raw(&z);
        let (c, m) = code(client.prove("small", WitnessFormat::Raw, &raw, ProveOptions::default()).await.unwrap_err());
        assert_eq!(c, Code::InvalidArgument, "{m}");
        assert!(m.contains("5 values"), "{m}");
        // An element outside the field.
        let mut bad = raw.clone();
        bad[32..64].fill(0xff);
        let (c, m) =
            code(client.prove("poseidon-8", WitnessFormat::Raw, &bad, ProveOptions::default()).await.unwrap_err());
        assert_eq!(c, Code::InvalidArgument, "{m}");
        // Unsatisfied: with C (compiled) the first failing row; without (zkey) the failed check.
        let mut unsat = z.clone();
        let last = unsat.len() - 1;
        unsat[last] += Fr::from(1u64);
        let job = client
            .prove("poseidon-8", WitnessFormat::Raw, &g16_service::witness::to_raw(&unsat), ProveOptions::default())
            .await
            .unwrap();
        let (c, m) = code(client.await_job(&job).await.unwrap_err());
        assert_eq!(c, Code::FailedPrecondition, "{m}");
        assert!(m.contains("constraint"), "{m}");
        let mut wtns = small_wtns();
        let n = wtns.len();
        wtns[n - 32] ^= 1;
        let job = client.prove_wtns("small", &wtns, ProveOptions::default()).await.unwrap();
        let (c, m) = code(client.await_job(&job).await.unwrap_err());
        assert_eq!(c, Code::FailedPrecondition, "{m}");
        // A message over the 4 MiB limit.
        let header = proto::ProveHeader { circuit: "small".into(), witness_bytes: 5 * 32, ..Default::default() };
        let huge = vec![
            proto::ProveChunk { part: Some(proto::prove_chunk::Part::Header(header)) },
            proto::ProveChunk { part: Some(proto::prove_chunk::Part::Data(vec![0u8; 5 << 20].into())) },
        ];
        let err = client.raw().prove(tokio_stream::iter(huge)).await.unwrap_err();
        assert_eq!(err.code(), Code::OutOfRange, "{err}");
        // A malformed key upload: a truncated zkey, and a compiled circuit with another key.
        let zkey = small_zkey();
        let (c, m) = code(client.register_zkey("cut", &zkey[..zkey.len() / 2]).await.unwrap_err());
        assert_eq!(c, Code::InvalidArgument, "{m}");
        let (_, other_key, _, _) = compiled_package(8);
        let (c, m) = code(client.register_compiled("mixed", &circuit, &other_key).await.unwrap_err());
        assert_eq!(c, Code::InvalidArgument, "{m}");
        assert!(m.contains("another proving key"), "{m}");
        // Unknown jobs, malformed ids, a job without a timeline.
        let (c, _) = code(client.await_job("not-a-uuid").await.unwrap_err());
        assert_eq!(c, Code::InvalidArgument);
        let (c, _) = code(client.await_job(&uuid_like()).await.unwrap_err());
        assert_eq!(c, Code::NotFound);
        let (c, _) = code(client.timeline(&job, TimelineFormat::Text).await.unwrap_err());
        assert_eq!(c, Code::FailedPrecondition);

        // Unharmed: a good proof still goes through.
        let job = client.prove_wtns("small", &small_wtns(), ProveOptions::default()).await.unwrap();
        assert!(verify(&small_vk(), &client.await_job(&job).await.unwrap()));
    });
}

fn uuid_like() -> String {
    "00000000-0000-4000-8000-000000000000".into()
}

#[test]
fn tokens_are_required_and_open_binds_refused_without_one() {
    let dir = std::env::temp_dir().join(format!("g16-serve-token-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let token_file = dir.join("token");
    std::fs::write(&token_file, "s3cret-token\n").unwrap();

    // Off loopback without a token: refused before binding.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_g16"))
        .args(["serve", "--devices", "cpu:0", "--listen", "0.0.0.0:0", "--no-metrics"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("without a token"), "{out:?}");

    let server = Server::start(&["--token-file", token_file.to_str().unwrap()]);
    runtime().block_on(async {
        let mut none = Client::connect(&server.grpc, None).await.unwrap();
        assert_eq!(code(none.status().await.unwrap_err()).0, Code::Unauthenticated);
        let mut wrong = Client::connect(&server.grpc, Some("guess")).await.unwrap();
        assert_eq!(code(wrong.register_zkey("small", &small_zkey()).await.unwrap_err()).0, Code::Unauthenticated);
        let mut right = Client::connect(&server.grpc, Some("s3cret-token")).await.unwrap();
        right.register_zkey("small", &small_zkey()).await.unwrap();
        let job = right.prove_wtns("small", &small_wtns(), ProveOptions::default()).await.unwrap();
        assert!(verify(&small_vk(), &right.await_job(&job).await.unwrap()));
    });
    assert!(server.http_get("/metrics").contains("401"), "metrics need the token too");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sigterm_finishes_queued_jobs_then_exits() {
    let mut server = Server::start(&["--grace-secs", "60"]);
    let rt = runtime();
    let (client, jobs) = rt.block_on(async {
        let mut client = server.client().await;
        client.register_zkey("small", &small_zkey()).await.unwrap();
        let mut jobs = Vec::new();
        for _ in 0..12 {
            jobs.push(client.prove_wtns("small", &small_wtns(), ProveOptions::default()).await.unwrap());
        }
        (client, jobs)
    });
    let _ = std::process::Command::new("kill").args(["-TERM", &server.pid().to_string()]).status();
    rt.block_on(async {
        let mut client = client;
        // New work is refused while it drains; what was queued is proven.
        let mut refused = false;
        for job in &jobs {
            match client.await_job(job).await {
                Ok(result) => assert!(verify(&small_vk(), &result)),
                Err(e) => panic!("job {job} was lost in the drain: {e}"),
            }
            if !refused {
                refused = client.prove_wtns("small", &small_wtns(), ProveOptions::default()).await.is_err();
            }
        }
    });
    assert_eq!(server.wait(Duration::from_secs(30)), Some(0), "g16 serve exits cleanly after draining");
}

#[test]
fn cancelled_jobs_say_so() {
    let server = Server::start(&[]);
    runtime().block_on(async {
        let mut client = server.client().await;
        client.register_zkey("small", &small_zkey()).await.unwrap();
        let job = client.prove_wtns("small", &small_wtns(), ProveOptions::default()).await.unwrap();
        let event = client.cancel(&job).await.unwrap();
        // Cancelled while queued, or proven before the cancel arrived: either is settled.
        match client.await_job(&job).await {
            Ok(result) => assert!(verify(&small_vk(), &result)),
            Err(e) => assert_eq!(code(e).0, Code::Cancelled, "{event:?}"),
        }
        let (c, _) = code(client.cancel(&uuid_like()).await.unwrap_err());
        assert_eq!(c, Code::NotFound);
    });
}

#[test]
fn a_full_queue_or_witness_budget_is_refused_not_queued() {
    // No queue at all: every proof request is refused, and says why.
    let closed = Server::start(&["--max-queued", "0"]);
    // A witness budget of 1 KiB: the small circuit's witness fits, poseidon 2^8's does not.
    let tight = Server::start(&["--witness-budget-mib", "0"]);
    runtime().block_on(async {
        let mut client = closed.client().await;
        client.register_zkey("small", &small_zkey()).await.unwrap();
        let (c, m) = code(client.prove_wtns("small", &small_wtns(), ProveOptions::default()).await.unwrap_err());
        assert_eq!(c, Code::ResourceExhausted, "{m}");
        assert!(m.contains("queue is full"), "{m}");

        let mut client = tight.client().await;
        client.register_zkey("small", &small_zkey()).await.unwrap();
        let (circuit, key, z, _) = compiled_package(8);
        client.register_compiled("poseidon-8", &circuit, &key).await.unwrap();
        let raw = g16_service::witness::to_raw(&z);
        let (c, m) =
            code(client.prove("poseidon-8", WitnessFormat::Raw, &raw, ProveOptions::default()).await.unwrap_err());
        assert_eq!(c, Code::ResourceExhausted, "{m}");
        assert!(m.contains("budget"), "{m}");
        // The budget is whole again for what fits.
        let job = client.prove_wtns("small", &small_wtns(), ProveOptions::default()).await.unwrap();
        assert!(verify(&small_vk(), &client.await_job(&job).await.unwrap()));
        assert_eq!(client.status().await.unwrap().witness_bytes_in_flight, 0);
    });
    assert_eq!(tight.metric("g16_requests_refused_total{code=\"ResourceExhausted\"}"), 1.0);
}

/// Whether `g16 devices` lists a wgpu adapter (lavapipe on CI).
fn wgpu_available() -> Result<(), String> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_g16")).arg("devices").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    match text.lines().find(|l| l.get(2..).is_some_and(|l| l.starts_with("wgpu"))) {
        Some(line) if line.contains(" available:") => Ok(()),
        Some(line) => Err(line.trim().to_string()),
        None => Err(format!("g16 devices lists no wgpu backend:\n{text}")),
    }
}

#[test]
fn serves_on_wgpu() {
    if let Err(why) = wgpu_available() {
        if !cfg!(feature = "wgpu") {
            eprintln!("g16 serve on wgpu: not in this build ({why})");
            return;
        }
        if std::env::var("G16_REQUIRE_WGPU").is_ok_and(|v| v == "1") {
            panic!("wgpu unavailable under G16_REQUIRE_WGPU=1: {why}");
        }
        eprintln!("\n!!! SKIPPED: g16 serve on wgpu: {why} (set G16_REQUIRE_WGPU=1 to make this a failure)\n");
        return;
    }
    let server = Server::start(&["--devices", "wgpu:0"]);
    runtime().block_on(async {
        let mut client = server.client().await;
        client.register_zkey("small", &small_zkey()).await.unwrap();
        let status = client.status().await.unwrap();
        assert_eq!(status.devices[0].backend, "wgpu");
        let job = client.prove_wtns("small", &small_wtns(), ProveOptions::default()).await.unwrap();
        let result = client.await_job(&job).await.unwrap();
        assert!(verify(&small_vk(), &result), "arkworks rejects the wgpu proof");
    });
}

/// `g16 client` for Filecoin's PoRep: `register --filecoin-proof --params` and `prove --c1`
/// reach the server and its refusals come back plainly (an unknown seal proof, a parameter file
/// outside the package directory, a C1 output for a circuit that is not a PoRep one). The
/// circuit itself, proven and accepted by verify_seal, is g16-service's tests/filecoin.rs.
#[cfg(feature = "filecoin")]
#[test]
fn the_client_registers_filecoin_circuits_and_sends_c1_outputs() {
    let dir = std::env::temp_dir().join(format!("g16-serve-filecoin-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("packages")).unwrap();
    let packages = dir.join("packages");
    let outside = dir.join("outside.params");
    std::fs::write(&outside, b"not a parameter file").unwrap();
    let c1 = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("filecoin/tests/fixtures/c1-2KiB-V1_1.json");
    let server = Server::start(&["--package-dir", packages.to_str().unwrap()]);
    let client = |args: &[&str]| g16_client(&server, args);
    let register = |proof: &str, params: &str| {
        client(&["register", "--name", "porep", "--filecoin-proof", proof, "--params", params])
    };
    let (ok, out) = register("StackedDrg2KiBV9", "x.params");
    assert!(!ok && out.contains("unsupported registered proof StackedDrg2KiBV9"), "{out}");
    let (ok, out) = register("StackedDrg2KiBV1_1", "../outside.params");
    assert!(!ok && out.contains("outside the package directory"), "{out}");
    let (ok, out) = client(&["register", "--name", "porep", "--filecoin-proof", "StackedDrg2KiBV1_1"]);
    assert!(!ok && out.contains("--params"), "{out}");

    let zkey = dir.join("small.zkey");
    std::fs::write(&zkey, small_zkey()).unwrap();
    let (ok, out) = client(&["register", "--name", "small", "--zkey", zkey.to_str().unwrap()]);
    assert!(ok, "{out}");
    let (ok, out) = client(&["prove", "--circuit", "small", "--c1", c1.to_str().unwrap()]);
    assert!(!ok && out.contains("not a Filecoin PoRep circuit"), "{out}");
    let (ok, out) = client(&["list"]);
    assert!(ok && out.contains("small") && !out.contains("porep"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A server built without the feature filecoin (`cargo test --no-default-features`, which CI
/// runs) refuses a PoRep registration as UNIMPLEMENTED with a reason that says so, through the
/// library and through `g16 client`, and keeps serving.
#[cfg(not(feature = "filecoin"))]
#[test]
fn filecoin_registrations_are_unimplemented_without_the_feature() {
    let server = Server::start(&[]);
    runtime().block_on(async {
        let mut client = server.client().await;
        let err = client.register_filecoin("porep", "StackedDrg2KiBV1_1", "x.params").await.unwrap_err();
        let (c, m) = code(err);
        assert_eq!(c, Code::Unimplemented, "{m}");
        assert!(m.contains("without Filecoin support"), "{m}");
        client.register_zkey("small", &small_zkey()).await.unwrap();
    });
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_g16"))
        .args(["client", "--server", &server.grpc, "register", "--name", "porep"])
        .args(["--filecoin-proof", "StackedDrg2KiBV1_1", "--params", "x.params"])
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success() && text.contains("without Filecoin support"), "{text}");
}
