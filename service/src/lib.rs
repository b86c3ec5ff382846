//! g16-service: `g16 serve`, a Groth16 proving service.
//!
//! ```text
//! client ─gRPC─▶ api ─▶ store (memory, or PostgreSQL shared by a fleet) ◀─ taker ─▶ engine ─▶ devices
//!                 │          jobs, circuits, witnesses, proofs              heartbeat   (keys resident)
//!                 └─ /metrics, /healthz (own port)
//! ```
//!
//! - Circuits are registered once (a snarkjs zkey, a g16 compiled circuit and its key, or, with
//!   the cargo feature `filecoin`, a Filecoin PoRep circuit and its parameter file) and stay
//!   resident on the devices between jobs, least recently used evicted first.
//! - A job is a witness for a registered circuit (for a Filecoin circuit, a sector's C1 output,
//!   proven as its partitions and returned as the C2 output). The API checks it and queues it; the taker of
//!   whichever server has room takes it under a lease, its engine proves and verifies it, and the
//!   server settles it exactly once. Clients await or watch a job on any server of a fleet.
//! - Backpressure is a bounded queue and a host-memory budget for witnesses: beyond either, a
//!   request is refused with `RESOURCE_EXHAUSTED`, never queued without bound.
//! - On shutdown the server stops accepting jobs, finishes what it holds (alone: what is queued
//!   too), then stops serving.
//! - Off loopback it requires a token, and every call must carry it.
//!
//! The service is generic over the backend: the caller opens the devices.

mod api;
mod budget;
pub mod config;
pub mod error;
#[cfg(feature = "filecoin")]
pub mod filecoin;
mod metrics;
pub mod package;
mod state;
mod stored_proof;
pub mod witness;
mod worker;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use g16_client::proto::prover_server::ProverServer;
use g16::engine::{Engine, EngineConfig, EngineDevice, LockDesign};
use g16::timeline::Timeline;
use g16::Backend;
use g16_queue::JobStore;
use tokio::net::TcpListener;
use tonic::transport::server::TcpIncoming;

pub use config::ServeConfig;

/// HTTP/2 flow-control window per stream (and four per connection), both sides.
pub const WINDOW: u32 = g16_client::WINDOW;
pub use error::ServiceError;

/// A server bound to its addresses, not yet serving.
pub struct Bound<B: Backend + 'static> {
    state: Arc<state::State<B>>,
    grpc: TcpListener,
    metrics: Option<TcpListener>,
}

/// Opens the engine over `devices` (backends with no key of their own) and binds the
/// configured addresses. `fleet` says whether `store` is shared with other servers.
pub async fn bind<B: Backend + 'static>(
    config: ServeConfig,
    store: Arc<dyn JobStore>,
    fleet: bool,
    devices: Vec<(String, B)>,
) -> Result<Bound<B>, ServiceError> {
    for addr in std::iter::once(config.listen).chain(config.metrics) {
        if !addr.ip().is_loopback() && config.token.is_none() {
            return Err(ServiceError::OpenBind(addr));
        }
    }
    let devices = devices
        .into_iter()
        .map(|(label, backend)| {
            let budget = config.resident_budget.or_else(|| backend.info().memory_bytes.map(|m| m / 4 * 3));
            EngineDevice::open(label, backend, budget)
        })
        .collect();
    let engine_config = EngineConfig {
        // Witness workers copy stored witnesses into field elements, or make a Filecoin
        // partition's witness from its C1 output (two at a time: at 32 GiB each is 4 GB).
        synthesis_workers: 2,
        channel_bound: 2,
        workers_per_device: 2,
        lock: LockDesign::Split,
        verify: config.verify,
        prefill: 0,
    };
    let engine = Engine::start(devices, engine_config, &Timeline::disabled())?;
    let listen = |addr: SocketAddr| async move {
        TcpListener::bind(addr).await.map_err(|source| ServiceError::Bind { addr, source })
    };
    let grpc = listen(config.listen).await?;
    let metrics = match config.metrics {
        Some(addr) => Some(listen(addr).await?),
        None => None,
    };
    let state = Arc::new(state::State::new(config, store, fleet, engine));
    Ok(Bound { state, grpc, metrics })
}

impl<B: Backend + 'static> Bound<B> {
    /// The gRPC address (with the port the system chose, for port 0).
    pub fn grpc_addr(&self) -> Option<SocketAddr> {
        self.grpc.local_addr().ok()
    }

    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics.as_ref().and_then(|l| l.local_addr().ok())
    }

    /// Serves until `shutdown` resolves, then drains: no new jobs; the jobs this server holds
    /// (alone: every queued job too) finish within the grace period; then the server stops.
    pub async fn serve(self, shutdown: impl Future<Output = ()> + Send + 'static) -> Result<(), ServiceError> {
        let Bound { state, grpc, metrics } = self;
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let stopping = {
            let rx = stop_rx.clone();
            move || *rx.borrow()
        };
        let taker = tokio::spawn(worker::take_jobs(Arc::clone(&state), stopping.clone()));
        let heartbeat = tokio::spawn(worker::heartbeat(Arc::clone(&state), stopping.clone()));
        let sampler = {
            let state = Arc::clone(&state);
            let stopping = stopping.clone();
            tokio::spawn(async move {
                let mut tick: u64 = 0;
                while !stopping() {
                    state.sample_busy();
                    // Once a minute: results older than the retention go (every server of a
                    // fleet does it; deleting twice deletes nothing more).
                    if tick.is_multiple_of(60) {
                        if let Some(before) = std::time::SystemTime::now().checked_sub(state.config.keep_results) {
                            let _ = state.store.purge(before).await;
                        }
                    }
                    tick += 1;
                    // Witnesses of jobs settled without a worker (cancelled while queued,
                    // expired) go back to the budget here.
                    for job in state.budget.held_jobs() {
                        if let Ok(Some(record)) = state.store.job(job).await {
                            if record.state.is_final() {
                                state.budget.release(job);
                            }
                        }
                    }
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            })
        };
        if let Some(listener) = metrics {
            tokio::spawn(serve_metrics(Arc::clone(&state), listener));
        }

        // Drains once `shutdown` resolves; the gRPC server keeps answering (Await, Watch) until
        // the drain is over.
        let (drained_tx, drained_rx) = tokio::sync::oneshot::channel::<()>();
        let drain_state = Arc::clone(&state);
        tokio::spawn(async move {
            shutdown.await;
            drain_state.accepting.store(false, Ordering::Release);
            let deadline = Instant::now() + drain_state.config.shutdown_grace;
            while Instant::now() < deadline {
                let mine = drain_state.running().len();
                // Alone, the queue is this server's memory: what is queued there is finished too.
                let queued = if drain_state.fleet {
                    0
                } else {
                    drain_state.store.depth().await.map(|d| d.queued.iter().sum::<u64>() + d.running).unwrap_or(0)
                };
                if drain_state.fleet && mine == 0 {
                    break;
                }
                // Alone, results leave with the server: wait until clients have read them.
                if !drain_state.fleet && mine == 0 && queued == 0 && drain_state.unread_count() == 0 {
                    break;
                }
                if drain_state.fleet {
                    // A fleet server takes no new jobs while it drains; the others take the rest.
                    let _ = stop_tx.send(true);
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            let _ = stop_tx.send(true);
            // Let watchers read the last results before the server goes.
            tokio::time::sleep(Duration::from_millis(200)).await;
            let _ = drained_tx.send(());
        });

        let api = api::Api { state: Arc::clone(&state) };
        let server = ProverServer::new(api)
            .max_decoding_message_size(state.config.max_message)
            .max_encoding_message_size(64 << 20);
        let token = state.config.token.as_deref().map(Arc::from);
        let service = tonic::service::interceptor::InterceptedService::new(server, api::CheckToken(token));
        // Witnesses are tens to hundreds of MiB on one stream: HTTP/2's default 64 KiB windows
        // would cost a round trip per 64 KiB (a 40 MiB upload took over a second on loopback).
        tonic::transport::Server::builder()
            .initial_stream_window_size(Some(WINDOW))
            .initial_connection_window_size(Some(WINDOW * 4))
            .max_frame_size(Some(g16_client::MAX_FRAME))
            .add_service(service)
            // Nagle's algorithm off on every accepted connection (the builder's own setting does
            // not reach connections served from a listener of ours): with it on, a small reply
            // waited for the client's delayed ACK, 40 ms a job.
            .serve_with_incoming_shutdown(TcpIncoming::from(grpc).with_nodelay(Some(true)), async {
                let _ = drained_rx.await;
            })
            .await?;
        // Nothing is in flight any more: the heartbeat and the sampler may stop mid-sleep.
        heartbeat.abort();
        sampler.abort();
        let _ = taker.await;
        Ok(())
    }
}

/// `/metrics` (Prometheus text) and `/healthz` ("ok" while accepting jobs, 503 while draining).
async fn serve_metrics<B: Backend + 'static>(state: Arc<state::State<B>>, listener: TcpListener) {
    use axum::http::{header, HeaderMap, StatusCode};
    use axum::routing::get;

    let metrics_state = Arc::clone(&state);
    let health_state = Arc::clone(&state);
    let app = axum::Router::new()
        .route(
            "/metrics",
            get(move |headers: HeaderMap| {
                let state = Arc::clone(&metrics_state);
                async move {
                    if let Some(token) = &state.config.token {
                        let given = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
                        let ok = given
                            .and_then(|v| v.strip_prefix("Bearer "))
                            .is_some_and(|g| api::same(g.as_bytes(), token.as_bytes()));
                        if !ok {
                            return (
                                StatusCode::UNAUTHORIZED,
                                String::from("this server needs 'authorization: Bearer <token>'\n"),
                            );
                        }
                    }
                    let gauges = state.gauges().await;
                    (StatusCode::OK, state.metrics.render(&gauges))
                }
            }),
        )
        .route(
            "/healthz",
            get(move || {
                let state = Arc::clone(&health_state);
                async move {
                    if state.is_accepting() {
                        (StatusCode::OK, "ok\n")
                    } else {
                        (StatusCode::SERVICE_UNAVAILABLE, "draining\n")
                    }
                }
            }),
        );
    let _ = axum::serve(listener, app).await;
}
