//! Filecoin's PoRep C2 as a resident circuit of the service (a server in this process, CPU
//! backend): the 2 KiB PoRep circuit registered by its seal proof and the parameter file
//! filecoin-proofs reads, on the server's disk; a sealed sector's C1 output proven as one job,
//! and its C2 output accepted by filecoin-proofs' verify_seal. Bad registrations and bad C1
//! outputs get a status that says what is wrong and no proof, and the server keeps serving.
//! Other servers on the same store load the package from its stored reference: from their own
//! copy of the file, refused where they have none or it is not the registered file.

#[path = "../../filecoin/tests/common/mod.rs"]
mod common;

use std::path::Path;
use std::sync::Arc;

use common::{params_dir, params_file, proof, seal, sector};
use g16_client::proto::PackageKind;
use g16_client::tonic::Code;
use g16_client::{Client, ClientError, ProveOptions, WitnessFormat};
use g16_filecoin::SealProof;
use g16_queue::{JobStore, MemoryStore};
use g16_service::ServeConfig;
use serde_json::Value;

fn status(e: ClientError) -> (Code, String) {
    match e {
        ClientError::Status(s) => (s.code(), s.message().to_string()),
        other => panic!("expected a status, got {other}"),
    }
}

/// A server named `worker` on `store` (a fleet's, shared by the servers of this test), its
/// package directory `package_dir`; it stops when the returned sender sends.
async fn serve(
    worker: &str,
    store: &Arc<MemoryStore>,
    package_dir: Option<&Path>,
) -> (Client, tokio::sync::oneshot::Sender<()>, tokio::task::JoinHandle<Result<(), g16_service::ServiceError>>) {
    let config = ServeConfig {
        listen: ([127, 0, 0, 1], 0).into(),
        metrics: None,
        worker: worker.to_string(),
        package_dir: package_dir.map(Path::to_path_buf),
        // Recorded once from the blank circuit, then read (as `g16 filecoin c2` caches it).
        circuit_cache: Some(Path::new(env!("CARGO_TARGET_TMPDIR")).join("filecoin-circuits")),
        ..ServeConfig::default()
    };
    let devices = vec![("cpu:0".to_string(), g16::backend::CpuBackend::new())];
    let bound = g16_service::bind(config, Arc::clone(store) as Arc<dyn JobStore>, true, devices).await.unwrap();
    let addr = bound.grpc_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(bound.serve(async {
        let _ = stopped.await;
    }));
    (Client::connect(&format!("http://{addr}"), None).await.unwrap(), stop, server)
}

#[test]
fn a_c1_output_is_proven_to_the_c2_output_verify_seal_accepts_and_bad_input_is_refused() {
    let dir = params_dir();
    let params = params_file();
    let params_name = params.file_name().unwrap().to_str().unwrap().to_string();
    let good = sector();
    let lotus_json = good.api_json();
    let lotus: Value = serde_json::from_slice(&lotus_json).unwrap();
    let edited = |edit: &dyn Fn(&mut Value)| {
        let mut v = lotus.clone();
        edit(&mut v);
        serde_json::to_vec(&v).unwrap()
    };
    // The C1 output of a 512 MiB sector as far as its name says (the vanilla proofs' shape is
    // checked after the name).
    let other_size = edited(&|v| v["registered_proof"] = "StackedDrg512MiBV1_1".into());
    // Named as the circuit's, its vanilla proofs said to be a 512 MiB sector's.
    let other_size_proofs = edited(&|v| {
        let proofs = v["vanilla_proofs"]["StackedDrg2KiBV1"].take();
        v["vanilla_proofs"] = serde_json::json!({ "StackedDrg512MiBV1": proofs });
    });
    // One byte of a sibling on the path from a challenged replica node to comm_r_last.
    let tampered = edited(&|v| {
        let byte = &mut v["vanilla_proofs"]["StackedDrg2KiBV1"][0][1]["comm_r_last_proof"]["data"]["Single"]["path"]
            ["path"][0]["hashes"][0][5];
        *byte = (byte.as_u64().unwrap() ^ 1).into();
    });
    // A sector sealed under V1's porep id, its C1 output claiming V1_1: well formed, but the
    // challenges V1_1 derives are not the ones its vanilla proofs answer.
    let v1: SealProof = "StackedDrg2KiBV1".parse().unwrap();
    let mut other_porep: Value = serde_json::from_slice(&seal(v1, 7).api_json()).unwrap();
    other_porep["registered_proof"] = proof().to_string().into();
    let other_porep = serde_json::to_vec(&other_porep).unwrap();

    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let c2 = runtime.block_on(async {
        let store = Arc::new(MemoryStore::new());
        let (mut client, stop, server) = serve("first", &store, Some(&dir)).await;

        // Registrations refused, each for what is wrong with it.
        let (code, m) = status(client.register_filecoin("porep", "StackedDrg2KiBV9", &params_name).await.unwrap_err());
        assert_eq!(code, Code::InvalidArgument, "{m}");
        assert!(m.contains("unsupported registered proof StackedDrg2KiBV9"), "{m}");
        // A file outside the package directory, named absolutely and through `..`.
        let outside = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml").canonicalize().unwrap();
        let up = "../".repeat(dir.canonicalize().unwrap().components().count());
        let climbing = format!("{up}{}", outside.to_str().unwrap().trim_start_matches('/'));
        for path in [outside.to_str().unwrap(), &climbing] {
            let (code, m) = status(client.register_filecoin("porep", &proof().to_string(), path).await.unwrap_err());
            assert_eq!(code, Code::PermissionDenied, "{path}: {m}");
            assert!(m.contains("outside the package directory"), "{m}");
        }
        let (code, m) =
            status(client.register_filecoin("porep", &proof().to_string(), "missing.params").await.unwrap_err());
        assert_eq!(code, Code::NotFound, "{m}");
        // Uploaded instead of named on the server's disk.
        let upload = client.register_files("porep", PackageKind::FilecoinPorep, std::slice::from_ref(&outside)).await;
        let (code, m) = status(upload.unwrap_err());
        assert_eq!(code, Code::InvalidArgument, "{m}");
        assert!(m.contains("path of its parameter file"), "{m}");
        assert!(client.circuits().await.unwrap().is_empty(), "nothing was registered");

        // The circuit, every point of its parameters checked; again, the same package.
        let started = std::time::Instant::now();
        let info = client.register_filecoin("porep", &proof().to_string(), &params_name).await.unwrap();
        eprintln!("registered in {:.1} s", started.elapsed().as_secs_f64());
        assert_eq!(info.kind, PackageKind::FilecoinPorep as i32);
        assert_eq!((info.seal_proof.as_str(), info.partitions), ("StackedDrg2KiBV1_1", 1));
        assert_eq!((info.constraints, info.variables, info.public_inputs), (2_687_921, 40 + 2_685_673, 39));
        let again = client.register_filecoin("porep", &proof().to_string(), &params_name).await.unwrap();
        assert_eq!(again.digest, info.digest);

        // Bad C1 outputs: refused at once, naming what is wrong.
        let options = ProveOptions::default;
        let (code, m) = status(client.prove_c1("porep", &other_size, options()).await.unwrap_err());
        assert_eq!(code, Code::InvalidArgument, "{m}");
        assert!(m.contains("StackedDrg512MiBV1_1") && m.contains("StackedDrg2KiBV1_1"), "{m}");
        let (code, m) = status(client.prove_c1("porep", &other_size_proofs, options()).await.unwrap_err());
        assert_eq!(code, Code::InvalidArgument, "{m}");
        assert!(m.contains("StackedDrg512MiBV1's"), "{m}");
        let (code, m) =
            status(client.prove_c1("porep", &lotus_json[..lotus_json.len() / 2], options()).await.unwrap_err());
        assert_eq!(code, Code::InvalidArgument, "{m}");
        assert!(m.contains("not valid JSON"), "{m}");
        let (code, m) = status(client.prove("porep", WitnessFormat::Raw, &[0u8; 64], options()).await.unwrap_err());
        assert_eq!(code, Code::InvalidArgument, "{m}");
        assert!(m.contains("C1 output"), "{m}");
        // filecoin-proofs' own bincode, which names no proof (the circuit's is taken), is
        // accepted; the job is cancelled before it costs a whole proof (or, if proven first,
        // its proof is checked).
        let job = client.prove_c1("porep", &bincode::serialize(&good.c1).unwrap(), options()).await.unwrap();
        client.cancel(&job).await.unwrap();
        match client.await_job(&job).await {
            Ok(result) => assert!(result.verified && result.proof.unwrap().filecoin_c2.len() == 192),
            Err(e) => assert_eq!(status(e).0, Code::Cancelled),
        }
        // Well formed, found wrong when the partition's witness is made or checked.
        let job = client.prove_c1("porep", &tampered, options()).await.unwrap();
        let (code, m) = status(client.await_job(&job).await.unwrap_err());
        assert_eq!(code, Code::FailedPrecondition, "{m}");
        assert!(m.contains("constraint"), "{m}");
        let job = client.prove_c1("porep", &other_porep, options()).await.unwrap();
        let (code, m) = status(client.await_job(&job).await.unwrap_err());
        assert_eq!(code, Code::InvalidArgument, "{m}");
        assert!(m.contains("public input"), "{m}");

        // Still serving: the sector's C1 output as lotus writes it, proven and verified.
        let started = std::time::Instant::now();
        let job = client.prove_c1("porep", &lotus_json, options()).await.unwrap();
        let result = client.await_job(&job).await.unwrap();
        eprintln!("proven in {:.1} s", started.elapsed().as_secs_f64());
        assert!(result.verified);
        assert_eq!(result.public_inputs.len(), 39);
        let proof = result.proof.unwrap();
        assert!(proof.arkworks.is_empty() && proof.proof_json.is_empty());

        // Another server of the fleet loads the circuit from the store's reference: with no
        // package directory it cannot, and says so; with its own copy of the file it does.
        let (mut elsewhere, stop_elsewhere, server_elsewhere) = serve("second", &store, None).await;
        let (code, m) = status(elsewhere.preload("porep").await.unwrap_err());
        assert_eq!(code, Code::FailedPrecondition, "{m}");
        assert!(m.contains("--package-dir"), "{m}");
        let _ = stop_elsewhere.send(());
        server_elsewhere.await.unwrap().unwrap();
        // Its copy of the file differs from the registered one in one bit: refused by digest.
        let altered = common::tempdir("altered-params");
        let mut bytes = std::fs::read(&params).unwrap();
        *bytes.last_mut().unwrap() ^= 1;
        std::fs::write(altered.join(&params_name), bytes).unwrap();
        let (mut other_copy, stop_other_copy, server_other_copy) = serve("altered", &store, Some(&altered)).await;
        let (code, m) = status(other_copy.preload("porep").await.unwrap_err());
        assert_eq!(code, Code::FailedPrecondition, "{m}");
        assert!(m.contains("not the one registered"), "{m}");
        let _ = stop_other_copy.send(());
        server_other_copy.await.unwrap().unwrap();
        let _ = std::fs::remove_dir_all(&altered);
        let (mut fleet, stop_fleet, server_fleet) = serve("third", &store, Some(&dir)).await;
        assert_eq!(fleet.preload("porep").await.unwrap(), ["cpu:0"]);
        let _ = stop_fleet.send(());
        server_fleet.await.unwrap().unwrap();

        let _ = stop.send(());
        server.await.unwrap().unwrap();
        proof.filecoin_c2
    });
    assert_eq!(c2.len(), 192, "one partition's proof");
    let c1 = good.c1_output();
    assert!(
        c1.verify_seal(good.prover_id, good.sector_id, &c2).unwrap(),
        "verify_seal rejects the service's C2 output"
    );
    // Another sector's ids: refused, so the acceptance above means something.
    assert!(!c1.verify_seal(good.prover_id, good.sector_id ^ 1, &c2).unwrap_or(false));
}
