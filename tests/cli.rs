//! The `g16` program end to end: each command as a user runs it, in a fresh key cache.

use std::path::PathBuf;
use std::process::{Command, Output};

struct Sandbox {
    dir: PathBuf,
}

impl Sandbox {
    fn new(name: &str) -> Sandbox {
        let dir = std::env::temp_dir().join(format!("g16-cli-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Sandbox { dir }
    }
    fn path(&self, file: &str) -> PathBuf {
        self.dir.join(file)
    }
    /// The JSON lines of `file` in the sandbox.
    fn json_lines(&self, file: &str) -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(self.path(file)).unwrap();
        text.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect()
    }
    fn g16(&self, args: &[&str]) -> Output {
        let out = Command::new(env!("CARGO_BIN_EXE_g16"))
            .args(args)
            .env("G16_CACHE_DIR", self.dir.join("cache"))
            .current_dir(&self.dir)
            .output()
            .expect("run g16");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "g16 {args:?} panicked:\n{stderr}");
        out
    }
    fn ok(&self, args: &[&str]) -> String {
        let out = self.g16(args);
        assert!(
            out.status.success(),
            "g16 {args:?} failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
    fn fails(&self, args: &[&str]) -> String {
        let out = self.g16(args);
        assert!(!out.status.success(), "g16 {args:?} should fail");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(stderr.contains("error"), "a failure says so: {stderr}");
        stderr
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn devices_lists_every_backend() {
    let sb = Sandbox::new("devices");
    let out = sb.ok(&["devices"]);
    assert!(out.lines().any(|l| l.starts_with('*') && l.contains("cpu") && l.contains("available")), "{out}");
    // CUDA says why it is unavailable on a machine without a GPU (CI), and is listed as available on one with it.
    let cuda_here = g16::backends::device_count(g16::BackendKind::Cuda) > 0;
    let cuda_line = if cuda_here { " available: " } else { " unavailable: " };
    assert!(out.lines().any(|l| l.contains("cuda") && l.contains(cuda_line)), "cuda line in {out}");
    // wgpu is available wherever a Vulkan driver is (lavapipe on CI), and says why not elsewhere.
    assert!(out.lines().any(|l| l.contains("wgpu") && l.contains("available")), "wgpu line in {out}");
}

#[test]
fn prove_json_verifies_and_reports_steps() {
    let sb = Sandbox::new("prove-json");
    let out = sb.ok(&["prove", "--circuit", "synthetic", "--size", "9", "--partitions", "2", "--json"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON object on stdout");
    assert_eq!(v["verified"], true);
    assert_eq!(v["backend"], "cpu");
    assert_eq!(v["circuit"], "synthetic");
    assert_eq!(v["size"], 9);
    assert_eq!(v["partitions"], 2);
    assert_eq!(v["proofs"], 2);
    assert!(v["wall_ms"].as_f64().unwrap() > 0.0);
    for step in ["SYNTH", "stage", "h", "msm_g1_a", "msm_g2_b", "msm_g1_h", "assemble", "verify"] {
        assert!(v["steps_ms"][step].as_f64().is_some(), "step {step} in {v}");
    }
    let busy = v["device_busy"].as_f64().unwrap();
    assert!(busy > 0.0 && busy <= 1.0);
    assert!(v["unattributed_ms"].as_f64().unwrap() >= 0.0);
    // The key was cached on first use and is reused.
    assert!(sb.path("cache").join("keys-v1").join("synthetic-9.pk").exists());
}

#[test]
fn trace_and_timeline_files_read_back_in_the_report() {
    let sb = Sandbox::new("trace");
    let out = sb.ok(&["prove", "--circuit", "poseidon", "--size", "10", "--trace", "t.json", "--timeline", "t.txt"]);
    assert!(out.contains("all verified"), "{out}");
    let trace: serde_json::Value = serde_json::from_slice(&std::fs::read(sb.path("t.json")).unwrap()).unwrap();
    let events = trace["traceEvents"].as_array().expect("traceEvents");
    assert!(events
        .iter()
        .all(|e| e["ph"].is_string() && e["ts"].is_number() && e["pid"].is_number() && e["tid"].is_number()));
    assert!(events.iter().any(|e| e["name"] == "msm_g1_h"));
    let text = std::fs::read_to_string(sb.path("t.txt")).unwrap();
    assert!(text.lines().any(|l| l.starts_with("TIMELINE,") && l.contains(",SYNTH_START,")));
    for file in ["t.json", "t.txt"] {
        let report = sb.ok(&["timeline", "report", file]);
        assert!(report.contains("prove") && report.contains("msm_g1_a"), "{report}");
        assert!(report.to_lowercase().contains("device"), "{report}");
    }
    sb.fails(&["timeline", "report", "missing.json"]);
    std::fs::write(sb.path("junk.json"), "{ not json").unwrap();
    sb.fails(&["timeline", "report", "junk.json"]);
}

#[test]
fn setup_out_and_prove_with_key_files() {
    let sb = Sandbox::new("setup");
    let out = sb.ok(&["setup", "--circuit", "synthetic", "--size", "8", "--out", "k.pk", "--compress", "--seed", "5"]);
    assert!(out.contains("k.pk"), "{out}");
    let key = sb.path("k.pk");
    let key = key.to_str().unwrap();
    sb.ok(&["prove", "--circuit", "synthetic", "--size", "8", "--key", key, "--backend", "cpu"]);
    // The same key for another size is a clear error, not a proof.
    for synthesis in ["witness", "full"] {
        let err = sb.fails(&["prove", "--circuit", "synthetic", "--size", "9", "--key", key, "--synthesis", synthesis]);
        assert!(err.contains("does not match the circuit: domain size"), "{err}");
    }
    // A truncated key file.
    let bytes = std::fs::read(sb.path("k.pk")).unwrap();
    std::fs::write(sb.path("cut.pk"), &bytes[..bytes.len() / 3]).unwrap();
    let err =
        sb.fails(&["prove", "--circuit", "synthetic", "--size", "8", "--key", sb.path("cut.pk").to_str().unwrap()]);
    assert!(err.contains("truncated"), "{err}");
    let err = sb.fails(&["prove", "--key", "does-not-exist.pk", "--circuit", "synthetic", "--size", "8"]);
    assert!(err.contains("does-not-exist.pk"), "{err}");
}

/// A setup's toxic waste comes from the OS unless `--seed` is given: two setups of one circuit
/// make different keys, the stored one among them; a seeded setup says on stderr that its key can
/// be forged and is not stored.
#[test]
fn setup_draws_toxic_waste_from_the_os_unless_seeded() {
    let sb = Sandbox::new("setup-randomness");
    let setup = |extra: &[&str]| {
        let mut args = vec!["setup", "--circuit", "synthetic", "--size", "6", "--backend", "cpu"];
        args.extend_from_slice(extra);
        let out = sb.g16(&args);
        assert!(out.status.success(), "g16 {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let quiet = setup(&["--out", "a.pk"]);
    assert!(!quiet.contains("forge"), "an OS-random setup warns of nothing: {quiet}");
    setup(&["--out", "b.pk"]);
    let (a, b) = (std::fs::read(sb.path("a.pk")).unwrap(), std::fs::read(sb.path("b.pk")).unwrap());
    assert!(a != b, "two setups without --seed made the same key");
    let stored = g16::key_store::KeyStore::new(sb.path("cache")).path(g16::circuits::CircuitKind::Synthetic, 6);
    assert!(std::fs::read(&stored).unwrap() == b, "the store holds the last OS-random key");
    let warned = setup(&["--seed", "5", "--out", "s.pk"]);
    assert!(warned.contains("--seed 5") && warned.contains("forge"), "a seeded setup warns: {warned}");
    assert!(std::fs::read(&stored).unwrap() == b, "a seeded key replaced the stored one");
    let (s1, s2) = (std::fs::read(sb.path("s.pk")).unwrap(), {
        setup(&["--seed", "5", "--out", "s2.pk"]);
        std::fs::read(sb.path("s2.pk")).unwrap()
    });
    assert!(s1 == s2, "one seed, one key");
}

/// `setup --backend`: the key is arkworks' for the same seed whichever backend multiplies, and
/// a backend that is not here is a plain error.
#[test]
fn setup_makes_arkworks_key_on_the_backend_asked_for() {
    let sb = Sandbox::new("setup-backends");
    let want = g16::key_store::generate(g16::circuits::CircuitKind::Synthetic, 6, g16::key_store::ToxicWaste::Seeded(3))
        .unwrap()
        .to_bytes(false)
        .unwrap();
    let mut backends = vec!["cpu"];
    if g16::backends::device_count(g16::BackendKind::Wgpu) > 0 {
        backends.push("wgpu");
    }
    for backend in backends {
        let file = format!("{backend}.pk");
        let out = sb.ok(&[
            "setup",
            "--circuit",
            "synthetic",
            "--size",
            "6",
            "--seed",
            "3",
            "--out",
            &file,
            "--backend",
            backend,
        ]);
        assert!(out.contains(&format!("on {backend}")), "{out}");
        assert!(std::fs::read(sb.path(&file)).unwrap() == want, "{backend}: not arkworks' key");
    }
    if g16::backends::device_count(g16::BackendKind::Cuda) == 0 {
        let err = sb.fails(&["setup", "--circuit", "synthetic", "--size", "6", "--backend", "cuda"]);
        assert!(err.contains("cuda backend unavailable") || err.contains("without the `cuda` feature"), "{err}");
    }
}

#[test]
fn bad_arguments_are_plain_errors() {
    let sb = Sandbox::new("args");
    if g16::backends::device_count(g16::BackendKind::Cuda) == 0 {
        let err = sb.fails(&["prove", "--backend", "cuda", "--circuit", "synthetic", "--size", "8"]);
        assert!(err.contains("cuda backend unavailable"), "{err}");
    }
    sb.fails(&["prove", "--circuit", "nope"]);
    sb.fails(&["prove", "--circuit", "synthetic", "--size", "99"]);
    sb.fails(&["bench", "--ops", "fft"]);
    sb.fails(&["bench", "--sizes", "9..3"]);
}

#[test]
fn bench_runs_the_witness_mix_msms_and_the_upload_under_their_own_names() {
    let sb = Sandbox::new("bench-witness");
    sb.ok(&[
        "bench",
        "--backends",
        "cpu",
        "--ops",
        "msm-g1-witness,msm-g2-witness,upload,spmv,prove-witness",
        "--sizes",
        "6",
        "--runs",
        "1",
        "--json",
        "w.jsonl",
    ]);
    let ops: Vec<String> = std::fs::read_to_string(sb.path("w.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a JSON line")["op"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ops, ["msm-g1-witness", "msm-g2-witness", "upload", "spmv", "prove-witness", "prove-witness-device"]);
}

#[test]
fn bench_prints_a_table_and_writes_json_lines_and_a_plot() {
    let sb = Sandbox::new("bench");
    let out = sb.ok(&[
        "bench",
        "--backends",
        "cpu",
        "--ops",
        "msm-g1,msm-g2,ntt,prove,prove-arkworks",
        "--sizes",
        "6..7",
        "--runs",
        "3",
        "--json",
        "r.jsonl",
        "--plot",
        "p.svg",
    ]);
    assert!(out.lines().next().unwrap().contains("cpu ms"), "{out}");
    let lines = sb.json_lines("r.jsonl");
    // 4 ops (+ prove-device, + arkworks' prove) × 2 sizes.
    assert_eq!(lines.len(), 12, "{lines:?}");
    assert_eq!(lines.iter().filter(|m| m["backend"] == "arkworks" && m["op"] == "prove").count(), 2);
    for m in &lines {
        for field in ["backend", "device", "driver", "op", "commit", "date"] {
            assert!(m[field].as_str().is_some_and(|s| !s.is_empty()), "{field} in {m}");
        }
        assert!(m["median_ms"].as_f64().unwrap() > 0.0);
        assert_eq!(m["runs"], 3);
        assert!(m["size"] == 6 || m["size"] == 7);
    }
    let svg = std::fs::read_to_string(sb.path("p.svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("cpu msm-g1"), "plot has a labelled series");
    // Without --plot no plot is written anywhere.
    let files = || {
        let mut names: Vec<_> = std::fs::read_dir(&sb.dir).unwrap().flatten().map(|e| e.file_name()).collect();
        names.sort();
        names
    };
    let before = files();
    sb.ok(&["bench", "--backends", "cpu", "--ops", "ntt", "--sizes", "5", "--runs", "1"]);
    let after = files();
    assert_eq!(before, after, "a bench without --plot wrote a file");
}

/// Keys and circuits made in memory (`--keys-in-memory`: nothing in the store), and the
/// scaling table and plot read back from the JSON lines.
/// `--mostly-bits`: proofs from the synthetic circuit's PoRep-like assignment, each verified
/// against its own public inputs (the bench fails a proof that does not verify), and named so in
/// `includes`; refused for any other op.
#[test]
fn bench_proves_the_mostly_bits_assignment_and_says_so() {
    let sb = Sandbox::new("bench-bits");
    let args = ["bench", "--backends", "cpu", "--ops", "prove-assignment", "--sizes", "8", "--runs", "2"];
    sb.ok(&[&args[..], &["--warmup", "0", "--keys-in-memory", "--mostly-bits", "--json", "b.jsonl"]].concat());
    let lines = sb.json_lines("b.jsonl");
    assert_eq!(lines.len(), 2, "the proof and its device section");
    assert!(lines.iter().all(|l| l["includes"].as_str().unwrap().contains("mostly-bits assignment")), "{lines:?}");
    let err = sb.fails(&["bench", "--backends", "cpu", "--ops", "msm-g1", "--sizes", "6", "--mostly-bits"]);
    assert!(err.contains("--mostly-bits is for prove-assignment and prove-witness"), "{err}");
}

/// Each JSON line names the tuning variables the run was given, as written, and a run at the
/// defaults has none: a file of several runs says which line ran under which setting.
#[cfg(feature = "cuda")]
#[test]
fn bench_lines_name_the_settings_they_ran_under() {
    let sb = Sandbox::new("bench-settings");
    let args = ["bench", "--backends", "cpu", "--ops", "ntt", "--sizes", "6", "--runs", "1", "--json", "s.jsonl"];
    sb.ok(&args);
    let out = Command::new(env!("CARGO_BIN_EXE_g16"))
        .args(args)
        .env("G16_CACHE_DIR", sb.path("cache"))
        .env("G16_CUDA_MSM_WINDOW", "13")
        .env("G16_CUDA_NTT_BLOCK", " 1024 ")
        .current_dir(&sb.dir)
        .output()
        .expect("run g16");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines = sb.json_lines("s.jsonl");
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].get("settings").is_none(), "defaults: no settings named: {}", lines[0]);
    let want = serde_json::json!({"G16_CUDA_MSM_WINDOW": "13", "G16_CUDA_NTT_BLOCK": "1024"});
    assert_eq!(lines[1]["settings"], want, "{}", lines[1]);
}

#[test]
fn bench_keys_in_memory_and_scaling_from_json() {
    let sb = Sandbox::new("bench-memory");
    let args = ["bench", "--backends", "cpu", "--ops", "prove-assignment", "--runs", "1"];
    for size in ["6", "7"] {
        sb.ok(&[&args[..], &["--sizes", size, "--keys-in-memory", "--json", "r.jsonl"]].concat());
    }
    let store = sb.path("cache").join("keys-v1");
    let stored = std::fs::read_dir(&store).map(|d| d.count()).unwrap_or(0);
    assert_eq!(stored, 0, "--keys-in-memory stores nothing in {}", store.display());
    let out = sb.ok(&["bench", "--from-json", "r.jsonl", "--plot", "s.svg"]);
    // Both ops (the whole call and its device section) at both sizes, the second with a factor.
    assert!(out.contains("cpu prove-assignment\n"), "{out}");
    let doubling: Vec<f64> = out
        .lines()
        .filter(|l| l.trim_start().starts_with('7'))
        .filter_map(|l| l.split_whitespace().nth(2)?.parse().ok())
        .collect();
    assert_eq!(doubling.len(), 2, "a factor per op at 2^7: {out}");
    assert!(doubling.iter().all(|f| *f > 0.0), "{doubling:?}");
    let svg = std::fs::read_to_string(sb.path("s.svg")).unwrap();
    assert!(svg.contains("cpu prove-assignment"), "plot has the series");
    std::fs::write(sb.path("bad.jsonl"), "{\"not\": \"a measurement\"}\n").unwrap();
    let err = sb.fails(&["bench", "--from-json", "bad.jsonl"]);
    assert!(err.contains("bad.jsonl:1") && err.contains("not a bench measurement"), "{err}");
}

/// `g16 plan`: the memory of a circuit's proofs, refused with the plan where it cannot fit.
#[test]
fn plan_says_what_fits_a_card() {
    let sb = Sandbox::new("plan");
    let out = sb.ok(&["plan", "--circuit", "synthetic", "--size", "22", "--memory-gib", "24"]);
    assert!(out.contains("G2 bases: B") && out.contains("per proof") && out.contains("fits a 24 GiB card"), "{out}");
    let err = sb.fails(&["plan", "--circuit", "synthetic", "--size", "26", "--memory-gib", "24"]);
    assert!(err.contains("does not fit a 24 GiB card") && err.contains("GiB resident"), "{err}");
    sb.fails(&["plan", "--size", "22", "--memory-gib", "-1"]);
}

/// `g16 compile`, `g16 witness`, then `g16 prove --compiled`: a proof from files that arkworks
/// verifies; and each way the files can disagree is a plain error that writes nothing.
#[test]
fn compile_witness_and_prove_from_files() {
    use ark_serialize::CanonicalDeserialize;
    use g16::{CheckedKey, Curve, Fr, Proof};
    use std::str::FromStr;

    let sb = Sandbox::new("compiled");
    let p = |f: &str| sb.path(f).to_str().unwrap().to_string();
    let (kind, size) = ("poseidon", "10");
    sb.ok(&["setup", "--circuit", kind, "--size", size, "--out", "k.pk"]);
    let out = sb.ok(&["compile", "--circuit", kind, "--size", size, "--out", "c.g16c"]);
    assert!(out.contains("bound to the stored key"), "{out}");
    sb.ok(&["witness", "--circuit", kind, "--size", size, "--seed", "3", "--out", "w.wtns"]);
    let prove = |key: &str, witness: &str, out: &str| -> Vec<String> {
        ["prove", "--compiled", &p("c.g16c"), "--witness", &p(witness), "--key", &p(key), "--out", &p(out)]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    let args = prove("k.pk", "w.wtns", "proof");
    let out = sb.ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.contains("proof verified"), "{out}");

    // arkworks' verifier accepts proof.bin with the inputs of public.json.
    let key = CheckedKey::load(&sb.path("k.pk")).unwrap();
    let proof = Proof::deserialize_compressed(&std::fs::read(sb.path("proof/proof.bin")).unwrap()[..]).unwrap();
    let public: Vec<String> =
        serde_json::from_slice(&std::fs::read(sb.path("proof/public.json")).unwrap()).expect("public.json");
    let public: Vec<Fr> = public.iter().map(|d| Fr::from_str(d).expect("a decimal")).collect();
    assert_eq!(public.len(), 2, "a built-in circuit's two public inputs");
    let pvk = ark_groth16::prepare_verifying_key(key.verifying_key());
    assert!(ark_groth16::Groth16::<Curve>::verify_proof(&pvk, &proof, &public).unwrap());
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(sb.path("proof/proof.json")).unwrap()).unwrap();
    assert_eq!((json["protocol"].as_str(), json["curve"].as_str()), (Some("groth16"), Some("bls12381")));

    let run = |args: Vec<String>| sb.fails(&args.iter().map(String::as_str).collect::<Vec<_>>());
    // A witness that does not satisfy the circuit: the first failing constraint, before any MSM.
    let mut z = g16::circom::read_wtns(&std::fs::read(sb.path("w.wtns")).unwrap()).unwrap();
    let last = z.len() - 1;
    z[last] += Fr::from(1u64);
    std::fs::write(sb.path("bad.wtns"), g16::circom::write_wtns(&z)).unwrap();
    let err = run(prove("k.pk", "bad.wtns", "bad"));
    assert!(err.contains("does not satisfy the circuit: constraint"), "{err}");
    // A witness of another circuit (its length differs).
    sb.ok(&["witness", "--circuit", "synthetic", "--size", "8", "--out", "other.wtns"]);
    let err = run(prove("k.pk", "other.wtns", "bad"));
    assert!(err.contains("witness") && err.contains("values"), "{err}");
    // A damaged witness file and a damaged compiled circuit.
    let bytes = std::fs::read(sb.path("w.wtns")).unwrap();
    std::fs::write(sb.path("cut.wtns"), &bytes[..bytes.len() - 7]).unwrap();
    assert!(run(prove("k.pk", "cut.wtns", "bad")).contains("truncated"));
    let mut circuit = std::fs::read(sb.path("c.g16c")).unwrap();
    let mid = circuit.len() / 2;
    circuit[mid] ^= 1;
    std::fs::write(sb.path("c.g16c"), &circuit).unwrap();
    assert!(run(prove("k.pk", "w.wtns", "bad")).contains("checksum"));
    circuit[mid] ^= 1;
    std::fs::write(sb.path("c.g16c"), &circuit).unwrap();
    // Another key of the same circuit (another setup): the compiled circuit is bound to the
    // first, so it is refused before any work.
    sb.ok(&["setup", "--circuit", kind, "--size", size, "--seed", "9", "--out", "k2.pk"]);
    let err = run(prove("k2.pk", "w.wtns", "bad"));
    assert!(err.contains("another proving key"), "{err}");
    // A key of another size.
    sb.ok(&["setup", "--circuit", kind, "--size", "11", "--out", "k3.pk"]);
    let err = run(prove("k3.pk", "w.wtns", "bad"));
    assert!(err.contains("another proving key") || err.contains("does not match"), "{err}");
    assert!(!sb.path("bad").join("proof.json").exists(), "a failed proof writes nothing");
}

/// A reader that leaves early (`g16 … | head -1`) ends the command quietly, not with a panic.
#[cfg(unix)]
#[test]
fn a_closed_stdout_ends_a_command_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let dir = std::env::temp_dir().join(format!("g16-closed-pipe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // The reader is gone before the command starts (closed after the spawn, it could lose the
    // race with a command that prints at once).
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_g16"))
        .args(["witness", "--circuit", "synthetic", "--size", "8", "--out"])
        .arg(dir.join("w.wtns"))
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "{:?}: {stderr}", out.status);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `g16 filecoin c2` refuses bad input plainly, before any proof (and `plan` records a
/// partition's circuit and plans it; `setup` refuses what it cannot do before any work): a cut
/// C1 file, one that names no proof (and none given), an unknown proof, malformed ids, and a parameter directory
/// without the sector's file (named). (The 2 KiB C1 output is a real one, sealed by
/// filecoin-proofs from seed 1; the proofs themselves are tested in filecoin/tests/c2.rs.)
#[cfg(feature = "filecoin")]
#[test]
fn filecoin_c2_refuses_bad_input_plainly() {
    let sb = Sandbox::new("filecoin");
    let c1 = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("filecoin/tests/fixtures/c1-2KiB-V1_1.json");
    let bytes = std::fs::read(&c1).unwrap();
    let cut = sb.path("cut.json");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let raw = sb.path("raw.json");
    let mut value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    value.as_object_mut().unwrap().remove("registered_proof");
    std::fs::write(&raw, value.to_string()).unwrap();
    let params = sb.path("params");
    std::fs::create_dir_all(&params).unwrap();
    let (c1, cut, raw, params) = (c1.to_str().unwrap(), cut.to_str().unwrap(), raw.to_str().unwrap(), params.to_str().unwrap());
    let c2 = |extra: &[&str]| {
        let mut args = vec!["filecoin", "c2", "--backend", "cpu", "--out", "p", "--params", params];
        args.extend_from_slice(extra);
        args.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let run = |extra: &[&str]| sb.fails(&c2(extra).iter().map(String::as_str).collect::<Vec<_>>());
    assert!(run(&["--c1", cut]).contains("not valid JSON"));
    assert!(run(&["--c1", raw]).contains("names no registered proof"));
    assert!(run(&["--c1", c1, "--proof", "StackedDrg2KiBV9"]).contains("unsupported registered proof"));
    assert!(run(&["--c1", c1, "--proof", "StackedDrg32GiBV1_1"]).contains("StackedDrg2KiBV1_1"));
    assert!(run(&["--c1", c1, "--prover-id", "12", "--sector-id", "1"]).contains("64 hex digits"));
    assert!(run(&["--c1", c1, "--runs", "0"]).contains("--runs"));
    let missing = run(&["--c1", c1]);
    assert!(missing.contains(".params") && missing.contains("cannot read"), "{missing}");
    assert!(!sb.path("p").exists(), "nothing is written for a refused run");

    // The partition's circuit recorded without a sector, its counts and plan.
    let plan = sb.ok(&["filecoin", "plan", "--proof", "StackedDrg2KiBV1_1", "--memory-gib", "24"]);
    assert!(plan.contains("2687921 constraints, 40 inputs"), "{plan}");
    assert!(plan.contains("domain 2^22") && plan.contains("fits a 24 GiB card"), "{plan}");
    assert!(sb.fails(&["filecoin", "plan", "--proof", "StackedDrg2KiBV1_2_Feat_NonInteractivePoRep", "--memory-gib", "24"])
        .contains("unsupported registered proof"));

    // `setup` refuses an unknown proof, and a directory it cannot make before any work. (The
    // files it writes are the tests' parameters: filecoin/tests/common, PoRepCircuit::write_params.)
    let setup = |proof: &str, dir: &str| {
        sb.fails(&["filecoin", "setup", "--proof", proof, "--params", dir, "--backend", "cpu"])
    };
    assert!(setup("StackedDrg2KiBV9", params).contains("unsupported registered proof"));
    let file = sb.path("a-file");
    std::fs::write(&file, b"").unwrap();
    let under_file = file.join("params");
    let refused = setup("StackedDrg2KiBV1_1", under_file.to_str().unwrap());
    assert!(refused.contains("cannot create") && refused.contains("a-file"), "{refused}");
    // A file already under the proof's name (a network's own, perhaps) is never replaced.
    let circuit = g16_filecoin::PoRepCircuit::compile("StackedDrg2KiBV1_1".parse().unwrap()).unwrap();
    let vk = std::path::Path::new(params).join(circuit.vk_file_name().unwrap());
    std::fs::write(&vk, b"theirs").unwrap();
    let kept = setup("StackedDrg2KiBV1_1", params);
    assert!(kept.contains("already there") && kept.contains(".vk"), "{kept}");
    assert_eq!(std::fs::read(&vk).unwrap(), b"theirs");
}
