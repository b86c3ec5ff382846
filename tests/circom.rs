//! circom and snarkjs end to end, with the real tools: circom2 compiles each circuit of
//! tests/circom for BLS12-381, snarkjs makes a powers of tau, the zkey and the witness, g16
//! proves on the CPU and on wgpu, and `snarkjs groth16 verify` must accept g16's proof and
//! reject it against a tampered public.json.
//!
//! The tools come from target/npm (where .ci/run installs snarkjs, circom2 and circomlib),
//! else from PATH (circomlib then from the node_modules that holds snarkjs). Where they are
//! missing the test says SKIPPED, and fails instead under G16_REQUIRE_CIRCOM=1. Everything
//! generated goes to a temporary directory.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use ark_ff::{PrimeField, UniformRand};
use g16::circom::json::read_public_json;
use g16::circom::zkey::read_header;
use g16::circom::{read_wtns, R1cs};
use g16::compiled::file::CircuitFile;
use g16::prover::Qap;
use g16::Fr;
use rand::Rng;

/// The npm tools, found.
struct Tools {
    snarkjs: PathBuf,
    circom2: PathBuf,
    /// circomlib's `circuits` directory.
    circomlib: PathBuf,
}

impl Tools {
    fn find() -> Option<Tools> {
        let npm = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/npm/node_modules");
        let in_npm = |name: &str| Some(npm.join(".bin").join(name)).filter(|p| p.exists());
        let on_path =
            |name: &str| std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(name)).find(|p| p.exists());
        let tool = |name: &str| in_npm(name).or_else(|| on_path(name));
        let snarkjs = tool("snarkjs")?;
        // circomlib in the node_modules that holds whichever snarkjs was found (its .bin entry
        // links into node_modules/snarkjs, locally and in a global install alike).
        let beside_snarkjs = std::fs::canonicalize(&snarkjs)
            .ok()?
            .ancestors()
            .find(|d| d.file_name().is_some_and(|n| n == "node_modules"))
            .map(|d| d.join("circomlib/circuits"));
        let circomlib = [Some(npm.join("circomlib/circuits")), beside_snarkjs]
            .into_iter()
            .flatten()
            .find(|p| p.join("poseidon.circom").exists())?;
        Some(Tools { circom2: tool("circom2")?, snarkjs, circomlib })
    }
}

/// A temporary directory, removed when the test ends.
struct TempDir(PathBuf);

impl TempDir {
    fn new(test: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("g16-circom-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(program: &Path, args: &[&str], dir: &Path) -> Output {
    Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()))
}

fn describe(program: &Path, args: &[&str], out: &Output) -> String {
    format!(
        "{} {}: {}\n{}\n{}",
        program.display(),
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs a tool that must succeed.
fn ok(program: &Path, args: &[&str], dir: &Path) -> Output {
    let out = run(program, args, dir);
    assert!(out.status.success(), "{}", describe(program, args, &out));
    out
}

fn g16() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_g16"))
}

/// One circuit of tests/circom with its input.
struct Circuit {
    name: &'static str,
    /// circom's optimisation flag: --O2 folds the linear constraints of circomlib's
    /// templates, which keeps Poseidon's domain at 2^8.
    optimise: &'static str,
    input: String,
}

fn circuits(rng: &mut impl Rng) -> Vec<Circuit> {
    let field = |rng: &mut _| Fr::rand(rng).into_bigint().to_string();
    let many: Vec<String> = (0..16).map(|_| field(&mut *rng)).collect();
    let many_b: Vec<String> = (0..16).map(|_| field(&mut *rng)).collect();
    let a: u8 = rng.gen_range(0..255);
    let bound: u16 = rng.gen_range(a as u16 + 1..=255);
    vec![
        Circuit { name: "many", optimise: "--O1", input: serde_json::json!({ "a": many, "b": many_b }).to_string() },
        Circuit {
            name: "hash",
            optimise: "--O2",
            input: serde_json::json!({ "a": a.to_string(), "b": field(rng), "bound": bound.to_string() }).to_string(),
        },
    ]
}

/// The wgpu backend is available, or says why not.
fn wgpu_available() -> Result<(), String> {
    let out = run(g16(), &["devices"], Path::new("."));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    match text.lines().find(|l| l.get(2..).is_some_and(|l| l.starts_with("wgpu"))) {
        Some(line) if line.contains(" available:") => Ok(()),
        Some(line) => Err(line.trim().to_string()),
        None => Err(format!("g16 devices lists no wgpu backend:\n{text}")),
    }
}

#[test]
fn snarkjs_verifies_g16_proofs_of_circom_circuits() {
    let Some(tools) = tools_or_skip() else { return };
    let help = run(g16(), &["prove", "--help"], Path::new("."));
    assert!(
        String::from_utf8_lossy(&help.stdout).contains("--zkey"),
        "g16 prove has no --zkey/--wtns/--out: src/cli/prove.rs hands them to cli::prove_files::prove_zkey"
    );
    let mut backends = vec!["cpu"];
    match wgpu_available() {
        Ok(()) => backends.push("wgpu"),
        // A CPU-only build (cargo feature wgpu off) has no wgpu to require.
        Err(why) if !cfg!(feature = "wgpu") => eprintln!("the wgpu proofs: not in this build ({why})"),
        Err(why) if std::env::var("G16_REQUIRE_WGPU").is_ok_and(|v| v == "1") => {
            panic!("wgpu unavailable under G16_REQUIRE_WGPU=1: {why}")
        }
        Err(why) => {
            eprintln!("\n!!! SKIPPED: the wgpu proofs: {why} (set G16_REQUIRE_WGPU=1 to make this a failure)\n")
        }
    }
    let mut rng = common::fresh_rng("circom");
    let tmp = TempDir::new("e2e");
    let dir = tmp.0.as_path();
    let started = Instant::now();
    // One powers of tau for both circuits (2^8 covers the largest domain), its entropy fresh.
    let (snarkjs, circom2) = (tools.snarkjs.as_path(), tools.circom2.as_path());
    let entropy = format!("-e={}", rng.gen::<u64>());
    ok(snarkjs, &["powersoftau", "new", "bls12381", "8", "pot0.ptau"], dir);
    ok(snarkjs, &["powersoftau", "contribute", "pot0.ptau", "pot1.ptau", "--name=g16", &entropy], dir);
    ok(snarkjs, &["powersoftau", "prepare", "phase2", "pot1.ptau", "pot.ptau"], dir);
    eprintln!("powers of tau: {:.1} s", started.elapsed().as_secs_f64());
    // circom2 reads only below its working directory: circomlib goes beside the circuits.
    copy_dir(&tools.circomlib, &dir.join("circomlib/circuits"));

    for circuit in circuits(&mut rng) {
        let name = circuit.name;
        let file = |ext: &str| format!("{name}{ext}");
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/circom").join(file(".circom")),
            dir.join(file(".circom")),
        )
        .unwrap();
        std::fs::write(dir.join(file(".json")), &circuit.input).unwrap();
        let setup = Instant::now();
        ok(circom2, &[&file(".circom"), "--r1cs", "--wasm", circuit.optimise, "--prime", "bls12381", "-o", "."], dir);
        ok(snarkjs, &["groth16", "setup", &file(".r1cs"), "pot.ptau", &file("0.zkey")], dir);
        ok(snarkjs, &["zkey", "contribute", &file("0.zkey"), &file(".zkey"), "--name=g16", &entropy], dir);
        ok(snarkjs, &["zkey", "export", "verificationkey", &file(".zkey"), &file("_vk.json")], dir);
        let wasm = format!("{name}_js/{name}.wasm");
        ok(snarkjs, &["wtns", "calculate", &wasm, &file(".json"), &file(".wtns")], dir);
        eprintln!("{name}: compiled, set up and witnessed in {:.1} s", setup.elapsed().as_secs_f64());

        // snarkjs's own proof, for its time and its public.json.
        let timer = Instant::now();
        ok(
            snarkjs,
            &["groth16", "prove", &file(".zkey"), &file(".wtns"), "snarkjs_proof.json", "snarkjs_public.json"],
            dir,
        );
        eprintln!("{name}: snarkjs groth16 prove {:.0} ms", timer.elapsed().as_secs_f64() * 1e3);
        let g16_inspect = ok(g16(), &["inspect", &file(".zkey")], dir);
        assert!(String::from_utf8_lossy(&g16_inspect.stdout).contains("every point on the curve"));

        let z = read_wtns(&std::fs::read(dir.join(file(".wtns"))).unwrap()).unwrap();
        let num_public = read_header(&std::fs::read(dir.join(file(".zkey"))).unwrap()).unwrap().num_public;
        for backend in &backends {
            let out = format!("out-{name}-{backend}");
            let args =
                ["prove", "--zkey", &file(".zkey"), "--wtns", &file(".wtns"), "--out", &out, "--backend", backend];
            let timer = Instant::now();
            let proved = ok(g16(), &args, dir);
            eprintln!(
                "{name}: g16 prove --backend {backend} {:.0} ms: {}",
                timer.elapsed().as_secs_f64() * 1e3,
                String::from_utf8_lossy(&proved.stdout).trim()
            );
            let (public, proof) = (format!("{out}/public.json"), format!("{out}/proof.json"));
            let verified = ok(snarkjs, &["groth16", "verify", &file("_vk.json"), &public, &proof], dir);
            assert!(String::from_utf8_lossy(&verified.stdout).contains("OK"), "{name} on {backend}");
            // public.json: the witness's public signals, written as snarkjs writes them.
            let written = std::fs::read_to_string(dir.join(&public)).unwrap();
            assert_eq!(read_public_json(&written).unwrap(), z[1..=num_public]);
            assert_eq!(written, std::fs::read_to_string(dir.join("snarkjs_public.json")).unwrap(), "{name}");

            // The same proof against another statement: snarkjs must refuse it.
            let tampered = format!("{out}/tampered.json");
            let mut signals = read_public_json(&written).unwrap();
            signals[0] += Fr::from(1u64);
            std::fs::write(dir.join(&tampered), g16::circom::json::public_json(&signals)).unwrap();
            let refused = run(snarkjs, &["groth16", "verify", &file("_vk.json"), &tampered, &proof], dir);
            assert!(!refused.status.success(), "{name} on {backend}: a tampered statement verified");
        }
    }

    // A witness of another circuit is refused before any proof is made, and nothing is written.
    let out = run(
        g16(),
        &["prove", "--zkey", "hash.zkey", "--wtns", "many.wtns", "--out", "mismatch", "--backend", "cpu"],
        dir,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("witness has"), "{stderr}");
    assert!(!dir.join("mismatch/proof.json").exists());
    eprintln!("circom end to end: {:.1} s", started.elapsed().as_secs_f64());
}

/// The tools, or the test's loud skip (a failure under G16_REQUIRE_CIRCOM=1).
fn tools_or_skip() -> Option<Tools> {
    let tools = Tools::find();
    if tools.is_none() {
        let message = "snarkjs, circom2 or circomlib not found in target/npm or on PATH (.ci/run installs them)";
        if std::env::var("G16_REQUIRE_CIRCOM").is_ok_and(|v| v == "1") {
            panic!("{message}, and G16_REQUIRE_CIRCOM=1");
        }
        eprintln!("\n!!! SKIPPED: {message} (set G16_REQUIRE_CIRCOM=1 to make this a failure)\n");
    }
    tools
}

#[test]
fn snarkjs_proves_with_a_zkey_g16_made_and_verifies_g16_proofs_from_it() {
    let Some(tools) = tools_or_skip() else { return };
    let snarkjs = tools.snarkjs.as_path();
    let tmp = TempDir::new("setup");
    let dir = tmp.0.as_path();
    let mut rng = common::fresh_rng("circom-setup");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/circom/fixtures");
    copy_dir(&fixtures, dir);
    // A built-in circuit (its witness from g16) and a circom one (its witness from circom).
    let seed = rng.gen::<u32>().to_string();
    ok(g16(), &["setup", "--circuit", "synthetic", "--size", "9", "--zkey", "s.zkey", "--seed", &seed], dir);
    ok(g16(), &["witness", "--circuit", "synthetic", "--size", "9", "--seed", &seed, "--out", "s.wtns"], dir);
    ok(g16(), &["setup", "--r1cs", "small.r1cs", "--zkey", "c.zkey", "--seed", &seed], dir);
    for (zkey, wtns) in [("s.zkey", "s.wtns"), ("c.zkey", "small.wtns")] {
        let vk = format!("{zkey}.vk.json");
        ok(snarkjs, &["zkey", "export", "verificationkey", zkey, &vk], dir);
        // snarkjs's own proof from g16's key.
        ok(snarkjs, &["groth16", "prove", zkey, wtns, "sj_proof.json", "sj_public.json"], dir);
        let verified = ok(snarkjs, &["groth16", "verify", &vk, "sj_public.json", "sj_proof.json"], dir);
        assert!(String::from_utf8_lossy(&verified.stdout).contains("OK"), "{zkey}: snarkjs's proof");
        // g16's proof from the same key, accepted by snarkjs, for the same public signals.
        ok(g16(), &["prove", "--zkey", zkey, "--wtns", wtns, "--backend", "cpu", "--out", "g16"], dir);
        let verified = ok(snarkjs, &["groth16", "verify", &vk, "g16/public.json", "g16/proof.json"], dir);
        assert!(String::from_utf8_lossy(&verified.stdout).contains("OK"), "{zkey}: g16's proof");
        assert_eq!(
            std::fs::read_to_string(dir.join("g16/public.json")).unwrap(),
            std::fs::read_to_string(dir.join("sj_public.json")).unwrap(),
            "{zkey}"
        );
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn inspect_describes_each_format_and_refuses_another_curve() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/circom/fixtures");
    let tmp = TempDir::new("inspect");
    // A compiled circuit, an arkworks key, and the same key with a point moved off the curve.
    let circuit = R1cs::from_bytes(&std::fs::read(fixtures.join("small.r1cs")).unwrap()).unwrap();
    let file = CircuitFile { circuit: circuit.into_circuit(Qap::Libsnark).unwrap(), key_digest: None };
    file.write(&tmp.0.join("small.g16circ")).unwrap();
    let mut rng = common::fresh_rng("inspect");
    let cubic = common::CubicCircuit { x: Fr::rand(&mut rng), w: Fr::rand(&mut rng), cheat: false };
    let key = common::setup(cubic, &mut rng);
    let bytes = key.write(&tmp.0.join("cubic.key"), false).unwrap();
    // The first point, α (uncompressed: x then y, 48 bytes each): y changed.
    let mut off_curve = bytes.clone();
    off_curve[95] ^= 1;
    std::fs::write(tmp.0.join("off-curve.key"), off_curve).unwrap();

    let inspect = |path: PathBuf| run(g16(), &["inspect", path.to_str().unwrap()], &tmp.0);
    for (path, expect) in [
        (fixtures.join("small.zkey"), "every point on the curve and in the subgroup (8 H points)"),
        (fixtures.join("small.r1cs"), "1 public outputs, 1 public inputs, 1 private inputs"),
        (fixtures.join("small.wtns"), "5 (z[0] = 1)"),
        (tmp.0.join("small.g16circ"), "g16 compiled circuit"),
        (tmp.0.join("cubic.key"), "every point on the curve and in the subgroup (7 H points)"),
    ] {
        let out = inspect(path.clone());
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let ok = out.status.success() && stdout.contains(expect) && stdout.contains("sha256");
        assert!(ok, "{}:\n{stdout}{stderr}", path.display());
    }
    // A key whose point fails is described, then refused: a non-zero exit that names the point.
    let out = inspect(tmp.0.join("off-curve.key"));
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success(), "inspect of a bad key exited 0:\n{stdout}");
    assert!(stdout.contains("FAILED: key point alpha_g1[0] is not on the curve") && stdout.contains("sha256"), "{stdout}");
    assert!(stderr.contains("off-curve.key") && stderr.contains("alpha_g1[0]"), "{stderr}");
    for file in ["small_bn128.zkey", "small_bn128.r1cs", "small_bn128.wtns"] {
        let out = inspect(fixtures.join(file));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains("bn128"), "{file}: {stderr}");
    }
}
