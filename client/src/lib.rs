//! g16-client: the proving service's API and a client for it.
//!
//! [`proto`] is the API as `proto/g16.proto` defines it (messages, and both the client and the
//! server stubs); [`Client`] wraps the client side: packages and witnesses go up in chunks, a
//! token goes with every call.
//!
//! ```no_run
//! # async fn demo() -> Result<(), g16_client::ClientError> {
//! use g16_client::{Client, ProveOptions};
//! let mut client = Client::connect("http://127.0.0.1:7316", None).await?;
//! client.register_zkey("small", &std::fs::read("small.zkey")?).await?;
//! let job = client.prove_wtns("small", &std::fs::read("small.wtns")?, ProveOptions::default()).await?;
//! let result = client.await_job(&job).await?;
//! std::fs::write("proof.json", result.proof.unwrap_or_default().proof_json)?;
//! # Ok(()) }
//! ```

use std::time::Duration;

use tonic::metadata::MetadataValue;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};
use tonic::{Request, Status};

/// The gRPC library the API is built on, for its `Code` and `Status`.
pub use prost::bytes::Bytes;
pub use tonic;

pub mod proto {
    tonic::include_proto!("g16.v1");
}

use proto::prover_client::ProverClient;
pub use proto::{CircuitInfo, JobEvent, JobResult, PackageKind, Priority, ServerStatus, TimelineFormat, WitnessFormat};

/// Bytes per streamed message: well under the servers' 4 MiB message limit.
pub const CHUNK_BYTES: usize = 1 << 20;

/// HTTP/2 flow-control window per stream (four per connection): a witness of tens of MiB goes
/// up in a few round trips instead of one per 64 KiB.
pub const WINDOW: u32 = 16 << 20;

/// The largest HTTP/2 frame each side accepts (the protocol's default is 16 KiB): a package
/// of gigabytes then crosses in fewer frames.
pub const MAX_FRAME: u32 = 1 << 20;

/// The port `g16 serve` listens on unless told otherwise.
pub const DEFAULT_PORT: u16 = 7316;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot connect to {endpoint}: {source}")]
    Connect { endpoint: String, source: tonic::transport::Error },
    #[error("'{0}' is not a server address (expected http://HOST:PORT)")]
    Endpoint(String),
    #[error("the token cannot be sent as metadata (it must be visible ASCII)")]
    Token,
    #[error("{}: {}", .0.code(), .0.message())]
    Status(#[from] Status),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Adds `authorization: Bearer <token>` to every call.
#[derive(Clone)]
pub struct Auth(Option<MetadataValue<tonic::metadata::Ascii>>);

impl tonic::service::Interceptor for Auth {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        if let Some(value) = &self.0 {
            request.metadata_mut().insert("authorization", value.clone());
        }
        Ok(request)
    }
}

/// How a proof is asked for.
#[derive(Clone, Debug, Default)]
pub struct ProveOptions {
    pub priority: Priority,
    /// Not started after this long from submission.
    pub deadline: Option<Duration>,
}

/// A connection to one server (any server of a fleet).
#[derive(Clone)]
pub struct Client {
    inner: ProverClient<InterceptedService<Channel, Auth>>,
}

impl Client {
    /// Connects to `endpoint` (`http://127.0.0.1:7316`), sending `token` with every call.
    pub async fn connect(endpoint: &str, token: Option<&str>) -> Result<Client, ClientError> {
        let auth = match token {
            Some(token) => Auth(Some(format!("Bearer {token}").parse().map_err(|_| ClientError::Token)?)),
            None => Auth(None),
        };
        let channel = Endpoint::from_shared(endpoint.to_string())
            .map_err(|_| ClientError::Endpoint(endpoint.to_string()))?
            .connect_timeout(Duration::from_secs(10))
            .tcp_nodelay(true)
            .initial_stream_window_size(Some(WINDOW))
            .initial_connection_window_size(Some(WINDOW * 4))
            .max_frame_size(Some(MAX_FRAME))
            .connect()
            .await
            .map_err(|source| ClientError::Connect { endpoint: endpoint.to_string(), source })?;
        Ok(Client { inner: ProverClient::with_interceptor(channel, auth).max_decoding_message_size(64 << 20) })
    }

    /// The generated client, for calls this wrapper does not cover.
    pub fn raw(&mut self) -> &mut ProverClient<InterceptedService<Channel, Auth>> {
        &mut self.inner
    }

    /// Registers a snarkjs `.zkey` under `name`.
    pub async fn register_zkey(&mut self, name: &str, zkey: &[u8]) -> Result<CircuitInfo, ClientError> {
        self.register(name, PackageKind::Zkey, &[zkey]).await
    }

    /// Registers a g16 compiled circuit file and its arkworks proving key under `name`.
    pub async fn register_compiled(
        &mut self,
        name: &str,
        circuit: &[u8],
        key: &[u8],
    ) -> Result<CircuitInfo, ClientError> {
        self.register(name, PackageKind::Compiled, &[circuit, key]).await
    }

    /// Registers a package the server reads from its own disk (inside its `--package-dir`).
    pub async fn register_path(
        &mut self,
        name: &str,
        kind: PackageKind,
        path: &str,
        key_path: Option<&str>,
    ) -> Result<CircuitInfo, ClientError> {
        let header = proto::RegisterHeader {
            name: name.to_string(),
            kind: kind.into(),
            path: path.to_string(),
            key_path: key_path.unwrap_or_default().to_string(),
            ..Default::default()
        };
        self.register_header(header).await
    }

    /// A registration of files on the server's disk: the header alone.
    async fn register_header(&mut self, header: proto::RegisterHeader) -> Result<CircuitInfo, ClientError> {
        let first = proto::RegisterChunk { part: Some(proto::register_chunk::Part::Header(header)) };
        Ok(self.inner.register_circuit(tokio_stream::iter([first])).await?.into_inner())
    }

    /// Registers Filecoin's PoRep circuit of the registered seal proof `seal_proof` (e.g.
    /// `StackedDrg32GiBV1_1`) with its parameter file at `params`, a path on the server's disk
    /// inside its `--package-dir`. The server compiles the circuit and checks the file's points.
    pub async fn register_filecoin(
        &mut self,
        name: &str,
        seal_proof: &str,
        params: &str,
    ) -> Result<CircuitInfo, ClientError> {
        let header = proto::RegisterHeader {
            name: name.to_string(),
            kind: PackageKind::FilecoinPorep.into(),
            path: params.to_string(),
            seal_proof: seal_proof.to_string(),
            ..Default::default()
        };
        self.register_header(header).await
    }

    async fn register(&mut self, name: &str, kind: PackageKind, parts: &[&[u8]]) -> Result<CircuitInfo, ClientError> {
        let lengths: Vec<u64> = parts.iter().map(|p| p.len() as u64).collect();
        let chunks: Vec<Bytes> = parts.iter().flat_map(|p| p.chunks(CHUNK_BYTES)).map(Bytes::copy_from_slice).collect();
        self.register_chunks(name, kind, &lengths, tokio_stream::iter(chunks)).await
    }

    /// Registers the package in the files `paths` (a zkey; or a compiled circuit, then its
    /// key), each sent as it is read, so that reading overlaps sending and the files are never
    /// whole in this process's memory.
    pub async fn register_files(
        &mut self,
        name: &str,
        kind: PackageKind,
        paths: &[std::path::PathBuf],
    ) -> Result<CircuitInfo, ClientError> {
        // Errors name the file.
        let named = |path: &std::path::Path| {
            let path = path.display().to_string();
            move |e: std::io::Error| std::io::Error::new(e.kind(), format!("{path}: {e}"))
        };
        let lengths = paths
            .iter()
            .map(|p| Ok(std::fs::metadata(p).map_err(named(p))?.len()))
            .collect::<std::io::Result<Vec<u64>>>()?;
        let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(16);
        let (paths, announced) = (paths.to_vec(), lengths.clone());
        let reader = std::thread::spawn(move || -> std::io::Result<()> {
            use std::io::Read;
            for (path, len) in paths.iter().zip(&announced) {
                // As many bytes as were announced: a file that grows meanwhile is cut there,
                // one that shrinks ends the upload short (and the server refuses it).
                let mut file = std::fs::File::open(path).map_err(named(path))?.take(*len);
                loop {
                    let mut chunk = Vec::with_capacity(CHUNK_BYTES);
                    (&mut file).take(CHUNK_BYTES as u64).read_to_end(&mut chunk).map_err(named(path))?;
                    if chunk.is_empty() {
                        break;
                    }
                    if tx.blocking_send(Bytes::from(chunk)).is_err() {
                        return Ok(()); // the call ended first; its error says why
                    }
                }
            }
            Ok(())
        });
        let sent = self.register_chunks(name, kind, &lengths, tokio_stream::wrappers::ReceiverStream::new(rx)).await;
        // A read that failed explains a short upload better than the server's refusal of it.
        match reader.join() {
            Ok(Err(e)) => Err(ClientError::Io(e)),
            Ok(Ok(())) => sent,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    /// The registration call: the header (the parts' `lengths`: one, or a compiled circuit's
    /// and its key's), then `chunks`.
    async fn register_chunks(
        &mut self,
        name: &str,
        kind: PackageKind,
        lengths: &[u64],
        chunks: impl tokio_stream::Stream<Item = Bytes> + Send + 'static,
    ) -> Result<CircuitInfo, ClientError> {
        use tokio_stream::StreamExt;
        let header = proto::RegisterHeader {
            name: name.to_string(),
            kind: kind.into(),
            package_bytes: lengths.iter().sum(),
            circuit_bytes: if lengths.len() > 1 { lengths[0] } else { 0 },
            ..Default::default()
        };
        let first = proto::RegisterChunk { part: Some(proto::register_chunk::Part::Header(header)) };
        let data = chunks.map(|data| proto::RegisterChunk { part: Some(proto::register_chunk::Part::Data(data)) });
        Ok(self.inner.register_circuit(tokio_stream::once(first).chain(data)).await?.into_inner())
    }

    pub async fn circuits(&mut self) -> Result<Vec<CircuitInfo>, ClientError> {
        Ok(self.inner.list_circuits(proto::ListCircuitsRequest {}).await?.into_inner().circuits)
    }

    pub async fn preload(&mut self, name: &str) -> Result<Vec<String>, ClientError> {
        Ok(self.inner.preload(proto::CircuitRef { name: name.to_string() }).await?.into_inner().devices)
    }

    pub async fn evict(&mut self, name: &str) -> Result<Vec<String>, ClientError> {
        Ok(self.inner.evict(proto::CircuitRef { name: name.to_string() }).await?.into_inner().devices)
    }

    /// Queues a proof of a circom `.wtns` witness; returns the job's id.
    pub async fn prove_wtns(
        &mut self,
        circuit: &str,
        wtns: &[u8],
        options: ProveOptions,
    ) -> Result<String, ClientError> {
        self.prove(circuit, WitnessFormat::Wtns, wtns, options).await
    }

    /// Queues a sector's PoRep C2: its C1 output (lotus's JSON, or filecoin-proofs' JSON or
    /// bincode) for a Filecoin circuit. The result's `proof.filecoin_c2` is the C2 output.
    pub async fn prove_c1(&mut self, circuit: &str, c1: &[u8], options: ProveOptions) -> Result<String, ClientError> {
        self.prove(circuit, WitnessFormat::FilecoinC1, c1, options).await
    }

    /// Queues a proof of `witness` in `format`; returns the job's id.
    pub async fn prove(
        &mut self,
        circuit: &str,
        format: WitnessFormat,
        witness: &[u8],
        options: ProveOptions,
    ) -> Result<String, ClientError> {
        self.prove_shared(circuit, format, Bytes::copy_from_slice(witness), options).await
    }

    /// [`Client::prove`] of a witness already in a shared buffer: its chunks are slices of it,
    /// not copies (for a caller that sends one witness many times, or holds it as `Bytes`).
    pub async fn prove_shared(
        &mut self,
        circuit: &str,
        format: WitnessFormat,
        witness: Bytes,
        options: ProveOptions,
    ) -> Result<String, ClientError> {
        let header = proto::ProveHeader {
            circuit: circuit.to_string(),
            priority: options.priority.into(),
            deadline_ms: options.deadline.map_or(0, |d| d.as_millis().max(1) as u64),
            format: format.into(),
            witness_bytes: witness.len() as u64,
        };
        let mut messages = vec![proto::ProveChunk { part: Some(proto::prove_chunk::Part::Header(header)) }];
        for start in (0..witness.len()).step_by(CHUNK_BYTES) {
            let chunk = witness.slice(start..(start + CHUNK_BYTES).min(witness.len()));
            messages.push(proto::ProveChunk { part: Some(proto::prove_chunk::Part::Data(chunk)) });
        }
        Ok(self.inner.prove(tokio_stream::iter(messages)).await?.into_inner().job_id)
    }

    /// Waits for a job's result; a job that failed, expired or was cancelled is its status.
    pub async fn await_job(&mut self, job: &str) -> Result<JobResult, ClientError> {
        Ok(self.inner.r#await(proto::JobRef { job_id: job.to_string() }).await?.into_inner())
    }

    /// The job's state changes as they happen, ending with its result or its status.
    pub async fn watch(&mut self, job: &str) -> Result<tonic::Streaming<JobEvent>, ClientError> {
        Ok(self.inner.watch(proto::JobRef { job_id: job.to_string() }).await?.into_inner())
    }

    pub async fn cancel(&mut self, job: &str) -> Result<JobEvent, ClientError> {
        Ok(self.inner.cancel(proto::JobRef { job_id: job.to_string() }).await?.into_inner())
    }

    pub async fn timeline(&mut self, job: &str, format: TimelineFormat) -> Result<Vec<u8>, ClientError> {
        let request = proto::TimelineRequest { job_id: job.to_string(), format: format.into() };
        Ok(self.inner.timeline(request).await?.into_inner().timeline)
    }

    pub async fn status(&mut self) -> Result<ServerStatus, ClientError> {
        Ok(self.inner.status(proto::StatusRequest {}).await?.into_inner())
    }
}
