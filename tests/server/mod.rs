//! Real `g16 serve` processes for the service tests: started on loopback with ports the system
//! picks, read back from the first line they print; killed when dropped.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use ark_groth16::Groth16;
use ark_serialize::CanonicalDeserialize;
use ark_snark::SNARK;
use g16::circom::Zkey;
use g16::{Curve, Fr, Proof, VerifyingKey};
use g16_client::{Client, JobResult};

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/circom/fixtures")
}

pub fn small_zkey() -> Vec<u8> {
    std::fs::read(fixtures().join("small.zkey")).expect("the small.zkey fixture")
}

pub fn small_wtns() -> Vec<u8> {
    std::fs::read(fixtures().join("small.wtns")).expect("the small.wtns fixture")
}

pub fn small_vk() -> VerifyingKey {
    Zkey::from_bytes(&small_zkey()).expect("the fixture zkey").key.verifying_key().clone()
}

/// Checks a job's proof with arkworks' verifier against `vk` and the public inputs it returned.
pub fn verify(vk: &VerifyingKey, result: &JobResult) -> bool {
    let proof = result.proof.as_ref().expect("a proof");
    let proof = Proof::deserialize_compressed(proof.arkworks.as_slice()).expect("an arkworks proof");
    let public: Vec<Fr> = result.public_inputs.iter().map(|s| s.parse().expect("a decimal input")).collect();
    Groth16::<Curve>::verify(vk, &public, &proof).expect("verification runs")
}

/// A built-in circuit (poseidon, 2^`size`) compiled beside its key: the package's two parts,
/// one instance's witness, and the key.
pub fn compiled_package(size: u32) -> (Vec<u8>, Vec<u8>, Vec<Fr>, g16::CheckedKey) {
    use g16::circuits::{BuiltinCircuit, CircuitKind};
    let mut rng = rand::thread_rng();
    let instance = |seed| BuiltinCircuit::new(CircuitKind::Poseidon, size, seed).unwrap();
    let key = g16::CheckedKey::generate(instance(0), &mut rng).unwrap();
    let circuit = g16::compiled::compile(instance(0)).unwrap();
    let digest = g16::key_store::key_digest_of(&key).unwrap();
    let file = g16::compiled::file::CircuitFile { circuit, key_digest: Some(digest) };
    let z = g16::compiled::witness(instance(7)).unwrap();
    (file.to_bytes(), key.to_bytes(false).unwrap(), z, key)
}

pub struct Server {
    pub child: Child,
    pub grpc: String,
    pub metrics: String,
    pub line: String,
}

impl Server {
    /// `g16 serve` with `extra` arguments, on the CPU backend unless they name `--devices`.
    pub fn start(extra: &[&str]) -> Server {
        let devices: &[&str] = if extra.contains(&"--devices") { &[] } else { &["--devices", "cpu:0"] };
        let mut child = Command::new(env!("CARGO_BIN_EXE_g16"))
            .args(["serve", "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0"])
            .args(devices)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("g16 serve starts");
        let mut out = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        out.read_line(&mut line).expect("g16 serve prints where it listens");
        // Keep draining stdout so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in out.lines() {});
        let grab = |after: &str| -> String {
            let rest = line.split(after).nth(1).unwrap_or_else(|| panic!("no '{after}' in: {line}"));
            rest.split([' ', ')', ',']).next().unwrap().to_string()
        };
        let (grpc, metrics) = (format!("http://{}", grab("listening on ")), grab("(metrics "));
        Server { child, grpc, metrics, line }
    }

    pub async fn client(&self) -> Client {
        Client::connect(&self.grpc, None).await.expect("connects")
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGTERM, then the exit code within `within`.
    pub fn terminate(&mut self, within: Duration) -> Option<i32> {
        let _ = Command::new("kill").args(["-TERM", &self.pid().to_string()]).status();
        self.wait(within)
    }

    pub fn wait(&mut self, within: Duration) -> Option<i32> {
        let deadline = std::time::Instant::now() + within;
        while std::time::Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }

    /// `kill -9`.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// GET `path` on the metrics port.
    pub fn http_get(&self, path: &str) -> String {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(&self.metrics).expect("metrics port");
        write!(s, "GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
        let mut body = String::new();
        s.read_to_string(&mut body).unwrap();
        body
    }

    /// The sum of a metric's samples whose line starts with `prefix`.
    pub fn metric(&self, prefix: &str) -> f64 {
        self.http_get("/metrics")
            .lines()
            .filter(|l| l.starts_with(prefix))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
