//! How `g16 serve` runs: typed options, read once.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// The gRPC address. Off loopback only with a token.
    pub listen: SocketAddr,
    /// `/metrics` and `/healthz` (`None`: not served). Off loopback only with a token, which
    /// `/metrics` then requires too.
    pub metrics: Option<SocketAddr>,
    /// Every call must carry `authorization: Bearer <token>`.
    pub token: Option<String>,
    /// Packages may be registered by path only from inside this directory.
    pub package_dir: Option<PathBuf>,
    /// Where the Filecoin PoRep circuits this server compiles are cached (`None`: recorded
    /// again on every load), as `g16 filecoin c2` caches them.
    pub circuit_cache: Option<PathBuf>,
    /// This server's name in the queue (leases, job records).
    pub worker: String,
    /// Jobs queued at once (all priorities); beyond it, `RESOURCE_EXHAUSTED`.
    pub max_queued: u64,
    /// Host memory for witnesses in flight; beyond it, `RESOURCE_EXHAUSTED`.
    pub witness_budget: u64,
    /// The largest gRPC message accepted (a chunk of a witness or package).
    pub max_message: usize,
    /// The largest package accepted.
    pub max_package: u64,
    /// How long a taken job stays this server's without a heartbeat.
    pub lease: Duration,
    /// How often a fleet server looks for work when it found none (a lone server is woken).
    pub poll: Duration,
    /// On SIGTERM, how long in-flight (and, alone, queued) jobs may take to finish.
    pub shutdown_grace: Duration,
    /// Verify every proof before returning it.
    pub verify: bool,
    /// How long a settled job's result stays readable before the queue forgets it.
    pub keep_results: Duration,
    /// Device memory the resident keys may take per device (`None`: three quarters of what
    /// the backend reports, unbounded where it reports nothing).
    pub resident_budget: Option<u64>,
    /// Put a circuit's key on the devices as it is registered (where the resident budget has
    /// room beside the keys already there), so its first job does not wait for the upload;
    /// `false`: on its first job, as after a restart.
    pub prepare_on_register: bool,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], g16_client::DEFAULT_PORT)),
            metrics: Some(SocketAddr::from(([127, 0, 0, 1], g16_client::DEFAULT_PORT + 1))),
            token: None,
            package_dir: None,
            circuit_cache: None,
            worker: default_worker_name(),
            max_queued: 4096,
            witness_budget: 4 << 30,
            max_message: 4 << 20,
            max_package: 64 << 30,
            lease: Duration::from_secs(30),
            poll: Duration::from_millis(50),
            shutdown_grace: Duration::from_secs(120),
            verify: true,
            keep_results: Duration::from_secs(24 * 3600),
            resident_budget: None,
            prepare_on_register: true,
        }
    }
}

/// `host:pid`: unique among servers running at once.
pub fn default_worker_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_string()).unwrap_or_default();
    format!("{}:{}", if host.is_empty() { "g16" } else { &host }, std::process::id())
}
