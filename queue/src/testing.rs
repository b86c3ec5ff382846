//! A throw-away PostgreSQL cluster for tests (cargo feature `testing`).
//!
//! [`TempPostgres::start`] runs `initdb` in a fresh directory and starts the server on a free
//! port of 127.0.0.1, with its socket in that directory; dropping it stops the server and
//! removes the directory. The server refuses to run as root, so as root the directory is given
//! to the `postgres` user and the server binaries run as that user (`runuser`).
//!
//! The binaries are found in `G16_POSTGRES_BINDIR` where set, else with `pg_config --bindir`,
//! else under `/usr/lib/postgresql/*/bin` (Debian's `postgresql` package), else on `PATH`.
//! Where they are missing, [`TempPostgres::start_or_skip`] fails the test when
//! `G16_REQUIRE_POSTGRES=1` (CI) and otherwise says the test is skipped.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The environment variable that turns a missing PostgreSQL from a skip into a failure.
pub const REQUIRE_POSTGRES: &str = "G16_REQUIRE_POSTGRES";
/// The environment variable naming the server binaries' directory, where they are not found
/// by themselves (another layout than Debian's).
pub const POSTGRES_BINDIR: &str = "G16_POSTGRES_BINDIR";

/// The database every cluster has, and the superuser (trusted: the server listens on loopback
/// only and lives as long as a test).
const DATABASE: &str = "g16";
const USER: &str = "postgres";

#[derive(Debug, thiserror::Error)]
pub enum TempPostgresError {
    #[error("PostgreSQL not found: {0}")]
    NotFound(String),
    #[error("{what} failed: {detail}")]
    Command { what: String, detail: String },
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
}

/// A PostgreSQL cluster that lives as long as this value.
pub struct TempPostgres {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
    url: String,
    /// Root runs the server binaries as the `postgres` user.
    as_postgres: bool,
}

impl TempPostgres {
    /// Creates and starts a cluster with an empty database `g16`.
    pub fn start() -> Result<TempPostgres, TempPostgresError> {
        let bin = bindir()?;
        let as_postgres = is_root()?;
        let dir = fresh_dir()?;
        let mut cluster = TempPostgres { bin, dir, port: 0, url: String::new(), as_postgres };
        // From here on, Drop cleans up whatever the steps below left.
        cluster.init()?;
        // Another process may take the free port between the probe and the server's bind: try
        // a few ports.
        let mut last = None;
        for _ in 0..5 {
            cluster.port = free_port()?;
            match cluster.start_server() {
                Ok(()) => {
                    last = None;
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        if let Some(e) = last {
            return Err(e);
        }
        cluster.url = format!("postgres://{USER}@127.0.0.1:{}/{DATABASE}", cluster.port);
        cluster
            .run("createdb", Command::new(cluster.bin.join("createdb")).args(cluster.client_args()).arg(DATABASE))?;
        Ok(cluster)
    }

    /// [`TempPostgres::start`] for a test: `None` (with a loud SKIPPED line) where PostgreSQL is
    /// not installed, unless `G16_REQUIRE_POSTGRES=1`, which makes that a failure; any other
    /// failure to start fails the test.
    pub fn start_or_skip() -> Option<TempPostgres> {
        match TempPostgres::start() {
            Ok(cluster) => Some(cluster),
            Err(TempPostgresError::NotFound(why)) if std::env::var(REQUIRE_POSTGRES).as_deref() != Ok("1") => {
                eprintln!(
                    "SKIPPED: PostgreSQL not found (install postgresql; {REQUIRE_POSTGRES}=1 makes this a failure): {why}"
                );
                None
            }
            Err(e) => panic!(
                "a PostgreSQL cluster for this test could not be started ({REQUIRE_POSTGRES}=1 requires one): {e}"
            ),
        }
    }

    /// `postgres://postgres@127.0.0.1:PORT/g16`.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Creates another empty database in the cluster; returns its URL.
    pub fn create_database(&self, name: &str) -> Result<String, TempPostgresError> {
        self.run("createdb", Command::new(self.bin.join("createdb")).args(self.client_args()).arg(name))?;
        Ok(format!("postgres://{USER}@127.0.0.1:{}/{name}", self.port))
    }

    /// Stops the server at once (as a crash would: no checkpoint, clients cut off).
    pub fn stop(&self) -> Result<(), TempPostgresError> {
        let data = self.data();
        self.run(
            "pg_ctl stop",
            self.server_command("pg_ctl").arg("-D").arg(&data).args(["-m", "immediate", "-w", "stop"]),
        )
    }

    /// Starts the stopped server again, on the same port.
    pub fn resume(&self) -> Result<(), TempPostgresError> {
        self.start_server()
    }

    /// [`TempPostgres::stop`], then [`TempPostgres::resume`].
    pub fn restart(&self) -> Result<(), TempPostgresError> {
        self.stop()?;
        self.resume()
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn init(&self) -> Result<(), TempPostgresError> {
        if self.as_postgres {
            self.run("chown", Command::new("chown").arg(format!("{USER}:")).arg(&self.dir))?;
        }
        let data = self.data();
        self.run(
            "initdb",
            self.server_command("initdb").arg("-D").arg(&data).args([
                "-U",
                USER,
                "--auth=trust",
                "--encoding=UTF8",
                "--no-sync",
                "--locale=C",
            ]),
        )
    }

    fn start_server(&self) -> Result<(), TempPostgresError> {
        let data = self.data();
        // Surviving the host's crash is worth nothing to a cluster that lives for one test (no
        // fsync); surviving the server's own (`stop`) is: commits still reach the kernel before
        // they return (synchronous_commit stays on).
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -c unix_socket_directories={} -c fsync=off \
             -c full_page_writes=off -c shared_buffers=16MB",
            self.port,
            self.dir.display()
        );
        let log = self.dir.join("server.log");
        let started = self.run(
            "pg_ctl start",
            self.server_command("pg_ctl")
                .arg("-D")
                .arg(&data)
                .arg("-l")
                .arg(&log)
                .args(["-w", "-t", "60", "-o", &options, "start"]),
        );
        started.map_err(|e| match e {
            TempPostgresError::Command { what, detail } => {
                let log = std::fs::read_to_string(&log).unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(20).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                TempPostgresError::Command { what, detail: format!("{detail}\nserver log:\n{}", tail.join("\n")) }
            }
            e => e,
        })
    }

    /// A server binary, run as `postgres` when we are root.
    fn server_command(&self, name: &str) -> Command {
        let program = self.bin.join(name);
        if self.as_postgres {
            let mut command = Command::new("runuser");
            command.args(["-u", USER, "--"]).arg(program);
            command
        } else {
            Command::new(program)
        }
    }

    fn client_args(&self) -> Vec<String> {
        vec!["-h".into(), "127.0.0.1".into(), "-p".into(), self.port.to_string(), "-U".into(), USER.into()]
    }

    fn run(&self, what: &str, command: &mut Command) -> Result<(), TempPostgresError> {
        // The server's children must not hold the test's stdout open.
        let output: Output = command
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| TempPostgresError::Io(format!("running {what}"), e))?;
        if output.status.success() {
            return Ok(());
        }
        Err(TempPostgresError::Command {
            what: what.to_string(),
            detail: format!(
                "{}\n{}{}",
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ),
        })
    }
}

impl Drop for TempPostgres {
    fn drop(&mut self) {
        if self.data().join("postmaster.pid").exists() {
            let _ = self.stop();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The directory holding `initdb`, `pg_ctl`, `postgres` and `createdb`.
fn bindir() -> Result<PathBuf, TempPostgresError> {
    let has_server = |dir: &Path| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file();
    if let Some(dir) = std::env::var_os(POSTGRES_BINDIR) {
        let dir = PathBuf::from(dir);
        return match has_server(&dir) {
            true => Ok(dir),
            false => {
                Err(TempPostgresError::NotFound(format!("no initdb and pg_ctl in {POSTGRES_BINDIR}={}", dir.display())))
            }
        };
    }
    let mut tried = Vec::new();
    if let Ok(output) = Command::new("pg_config").arg("--bindir").output() {
        let dir = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
        if output.status.success() && has_server(&dir) {
            return Ok(dir);
        }
        tried.push(dir.display().to_string());
    }
    // Debian installs each major version apart; the newest wins.
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| Some((entry.file_name().to_str()?.parse().ok()?, entry.path().join("bin"))))
        .collect();
    versions.sort();
    if let Some((_, dir)) = versions.into_iter().rev().find(|(_, dir)| has_server(dir)) {
        return Ok(dir);
    }
    tried.push("/usr/lib/postgresql/*/bin".into());
    for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
        if has_server(&dir) {
            return Ok(dir);
        }
    }
    tried.push("PATH".into());
    Err(TempPostgresError::NotFound(format!("no initdb and pg_ctl in {}", tried.join(", "))))
}

fn is_root() -> Result<bool, TempPostgresError> {
    let output = Command::new("id").arg("-u").output().map_err(|e| TempPostgresError::Io("running id -u".into(), e))?;
    Ok(String::from_utf8_lossy(&output.stdout).trim() == "0")
}

fn fresh_dir() -> Result<PathBuf, TempPostgresError> {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    let name = format!("g16-pg-{}-{}-{nanos}", std::process::id(), COUNT.fetch_add(1, Ordering::Relaxed));
    let dir = std::env::temp_dir().join(name);
    std::fs::create_dir(&dir).map_err(|e| TempPostgresError::Io(format!("creating {}", dir.display()), e))?;
    Ok(dir)
}

fn free_port() -> Result<u16, TempPostgresError> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| TempPostgresError::Io("finding a free port".into(), e))?;
    listener.local_addr().map(|a| a.port()).map_err(|e| TempPostgresError::Io("finding a free port".into(), e))
}
