//! The gRPC API (`proto/g16.proto`): each call checked, turned into store and engine work, and
//! answered with a status that says what was wrong.

use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use ark_serialize::CanonicalDeserialize;
use g16::circom::json::{proof_json, public_json};
use g16::prover::PointChecks;
use g16::timeline::chrome::write_chrome;
use g16::timeline::text::read_text;
use g16::{Backend, Proof};
use g16_client::proto::prover_server::Prover;
use g16_client::proto::{
    self, register_chunk, CircuitInfo, CircuitRef, JobAccepted, JobEvent, JobRef, JobResult, ListCircuitsReply,
    ListCircuitsRequest, PackageKind, ProveChunk, RegisterChunk, ResidentReply, ServerStatus, StatusRequest,
    TimelineFormat, TimelineReply, TimelineRequest, WitnessFormat,
};
use g16_queue::{CircuitRecord, JobId, JobRecord, JobState, NewJob, Outcome, Priority};
use tokio_stream::{Stream, StreamExt};
use tonic::{Code, Request, Response, Status, Streaming};

use crate::error::{reason, store_status};
use crate::package::{self, hex, PathError, Witnesses};
use crate::state::State;
use crate::stored_proof::{self, StoredProof};
use crate::witness;

pub(crate) struct Api<B: Backend + 'static> {
    pub state: Arc<State<B>>,
}

/// How long one wait on the store lasts before the job is read again.
const WATCH_STEP: Duration = Duration::from_secs(5);

impl<B: Backend + 'static> Api<B> {
    /// Counts a refusal in the metrics on its way out.
    fn refuse(&self, status: Status) -> Status {
        self.state.metrics.refused(status.code());
        status
    }

    async fn register(&self, mut chunks: Streaming<RegisterChunk>) -> Result<CircuitInfo, Status> {
        let header = match chunks.next().await {
            Some(Ok(RegisterChunk { part: Some(register_chunk::Part::Header(h)) })) => h,
            Some(Err(status)) => return Err(status),
            _ => return Err(Status::invalid_argument("a registration starts with its header")),
        };
        if header.name.is_empty() || header.name.len() > 200 || header.name.chars().any(|c| c.is_control()) {
            return Err(Status::invalid_argument("a circuit's name is 1 to 200 printable characters"));
        }
        let kind = PackageKind::try_from(header.kind)
            .ok()
            .filter(|k| *k != PackageKind::Unspecified)
            .ok_or_else(|| Status::invalid_argument("the package kind must be ZKEY, COMPILED or FILECOIN_POREP"))?;
        if kind == PackageKind::FilecoinPorep {
            return self.register_porep(header).await;
        }
        let started = Instant::now();
        let stored = if header.path.is_empty() {
            if header.package_bytes > self.state.config.max_package {
                return Err(Status::resource_exhausted(format!(
                    "the package is {} bytes; this server takes at most {}",
                    header.package_bytes, self.state.config.max_package
                )));
            }
            // Received straight after the stored package's header: no copy of the package.
            let prefix = package::header(kind, header.circuit_bytes);
            receive(&mut chunks, header.package_bytes, &prefix, |c: RegisterChunk| match c.part {
                Some(register_chunk::Part::Data(d)) => Ok(d),
                _ => Err(Status::invalid_argument("after the header, a registration carries only data")),
            })
            .await?
        } else {
            self.read_package_files(kind, &header.path, &header.key_path).await?
        };
        let name = header.name.clone();
        let received = started.elapsed();
        let digest = g16::key_store::digest_bytes(&stored);
        let known = self.known(&name, &digest).await?;
        // Otherwise every point is checked, the subgroup checks on the engine's first device.
        let checker = self.state.engine.subgroup_checker();
        let (loaded, stored) = tokio::task::spawn_blocking(move || {
            let checks = if known { PointChecks::CurveOnly } else { PointChecks::FullOn(&checker) };
            (package::load(&name, &stored, &digest, checks), stored)
        })
        .await
        .map_err(|e| Status::internal(format!("checking the package: {e}")))?;
        let loaded = loaded.map_err(|e| Status::invalid_argument(format!("the package: {e}")))?;
        let checked = started.elapsed();
        let bytes = stored.len();
        let info = self.keep(header.name, digest, stored, loaded).await?;
        // What registration costs, phase by phase, for the operator's log.
        let done = started.elapsed();
        eprintln!(
            "g16 serve: registered '{}' ({:.1} MB{}): received in {:.2} s, decoded and checked in {:.2} s, stored in {:.2} s",
            info.name,
            bytes as f64 / 1e6,
            if known { ", digest known: curve equations only" } else { "" },
            received.as_secs_f64(),
            (checked - received).as_secs_f64(),
            (done - checked).as_secs_f64(),
        );
        Ok(info)
    }

    /// Whether `name` is registered with the package of `digest` already. Its points were
    /// checked when it was first registered (the store holds only packages that passed), so
    /// registering it again checks the curve equations alone.
    async fn known(&self, name: &str, digest: &g16::digest::FileDigest) -> Result<bool, Status> {
        let circuits = self.state.store.circuits().await.map_err(store_status)?;
        Ok(circuits.iter().any(|c| c.name == name && c.digest == *digest))
    }

    /// Stores a package that loaded, and keeps it loaded here.
    async fn keep(
        &self,
        name: String,
        digest: g16::digest::FileDigest,
        stored: Vec<u8>,
        loaded: package::Loaded,
    ) -> Result<CircuitInfo, Status> {
        self.state.store.put_circuit(CircuitRecord { name, digest, package: stored }).await.map_err(store_status)?;
        let loaded = self.state.remember(Arc::new(loaded));
        if self.state.config.prepare_on_register {
            self.prepare_in_background(Arc::clone(&loaded));
        }
        Ok(loaded.info.clone())
    }

    /// Puts a circuit just registered on the devices with room for it, while the client gets
    /// its answer: its first job then finds the key resident, or waits only for what is left of
    /// its preparation (a job needing the key waits on the same preparation, never a second).
    /// Only after the store holds it, so a job of another package under the name never meets
    /// this key. A failure here is logged; the first job prepares the key again and reports it.
    fn prepare_in_background(&self, loaded: Arc<package::Loaded>) {
        let state = Arc::clone(&self.state);
        tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            let name = &loaded.info.name;
            match state.engine.preload_into_free_room(&loaded.key) {
                Ok(devices) if devices.is_empty() => {
                    eprintln!("g16 serve: '{name}' left for its first job: no device has room beside its resident keys")
                }
                Ok(devices) => eprintln!(
                    "g16 serve: '{name}' prepared on {} in {:.2} s",
                    devices.join(", "),
                    started.elapsed().as_secs_f64()
                ),
                Err(e) => eprintln!("g16 serve: preparing '{name}' as it was registered: {e}"),
            }
        });
    }

    /// A Filecoin PoRep circuit: its seal proof's circuit, and its parameter file read from the
    /// server's disk (inside `--package-dir`) with every point checked; the store keeps a
    /// reference to the file and its digest (see `filecoin.rs`).
    #[cfg(feature = "filecoin")]
    async fn register_porep(&self, header: proto::RegisterHeader) -> Result<CircuitInfo, Status> {
        use crate::filecoin::{self, PoRepPackage};
        if header.path.is_empty() || header.package_bytes != 0 {
            return Err(Status::invalid_argument(
                "a Filecoin PoRep circuit is registered by the path of its parameter file on the server, not uploaded",
            ));
        }
        let proof: g16_filecoin::SealProof =
            header.seal_proof.parse().map_err(|e| Status::invalid_argument(format!("seal_proof: {e}")))?;
        let dir = self.state.config.package_dir.as_deref();
        let full = package::inside(dir, Path::new(&header.path)).map_err(path_status)?;
        let params = full
            .strip_prefix(dir.and_then(|d| d.canonicalize().ok()).unwrap_or_default())
            .map_err(|_| Status::internal("the parameter file moved out of the package directory"))?
            .to_path_buf();
        let cache = self.state.config.circuit_cache.clone();
        let (circuit, decoded) = tokio::task::spawn_blocking(move || filecoin::open(proof, &full, cache.as_deref()))
            .await
            .map_err(|e| Status::internal(format!("reading the parameter file: {e}")))?
            .map_err(|e| Status::invalid_argument(format!("the package: {e}")))?;
        let reference = PoRepPackage { proof, params, params_digest: decoded.digest() };
        let stored = reference.encode().map_err(|e| Status::invalid_argument(format!("the package: {e}")))?;
        let digest = g16::key_store::digest_bytes(&stored);
        let known = self.known(&header.name, &digest).await?;
        let checker = self.state.engine.subgroup_checker();
        let name = header.name.clone();
        let (loaded, stored) = tokio::task::spawn_blocking(move || {
            let checks = if known { PointChecks::CurveOnly } else { PointChecks::FullOn(&checker) };
            (filecoin::loaded(&name, &stored, &digest, circuit, decoded, checks), stored)
        })
        .await
        .map_err(|e| Status::internal(format!("checking the package: {e}")))?;
        let loaded = loaded.map_err(|e| Status::invalid_argument(format!("the package: {e}")))?;
        self.keep(header.name, digest, stored, loaded).await
    }

    #[cfg(not(feature = "filecoin"))]
    async fn register_porep(&self, _: proto::RegisterHeader) -> Result<CircuitInfo, Status> {
        Err(Status::unimplemented(package::PackageError::NoFilecoin.to_string()))
    }

    /// A package from the server's own disk, only from inside `--package-dir`, read straight
    /// behind the stored header (off the async runtime: a zkey is gigabytes).
    async fn read_package_files(&self, kind: PackageKind, path: &str, key_path: &str) -> Result<Vec<u8>, Status> {
        let dir = self.state.config.package_dir.as_deref();
        let inside = |p: &str| package::inside(dir, Path::new(p)).map_err(path_status);
        let paths = match kind {
            PackageKind::Compiled if key_path.is_empty() => {
                return Err(Status::invalid_argument("a compiled circuit registered by path needs key_path"))
            }
            PackageKind::Compiled => vec![inside(path)?, inside(key_path)?],
            _ => vec![inside(path)?],
        };
        tokio::task::spawn_blocking(move || {
            let paths: Vec<&Path> = paths.iter().map(|p| p.as_path()).collect();
            package::read_files(kind, &paths)
        })
        .await
        .map_err(|e| Status::internal(format!("reading the package: {e}")))?
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::OutOfMemory => {
                Status::resource_exhausted(format!("no host memory for the package: {e}"))
            }
            _ => Status::not_found(format!("cannot read {e}")),
        })
    }

    async fn accept(&self, mut chunks: Streaming<ProveChunk>) -> Result<JobAccepted, Status> {
        let state = &self.state;
        if !state.is_accepting() {
            return Err(Status::unavailable("the server is shutting down"));
        }
        let header = match chunks.next().await {
            Some(Ok(ProveChunk { part: Some(proto::prove_chunk::Part::Header(h)) })) => h,
            Some(Err(status)) => return Err(status),
            _ => return Err(Status::invalid_argument("a proof request starts with its header")),
        };
        let loaded = state.circuit(&header.circuit).await?;
        let format = WitnessFormat::try_from(header.format)
            .map_err(|_| Status::invalid_argument(format!("unknown witness format {}", header.format)))?;
        let priority = match proto::Priority::try_from(header.priority) {
            Ok(proto::Priority::Low) => Priority::Low,
            Ok(proto::Priority::Normal) => Priority::Normal,
            Ok(proto::Priority::High) => Priority::High,
            Ok(proto::Priority::Urgent) => Priority::Urgent,
            Err(_) => return Err(Status::invalid_argument(format!("unknown priority {}", header.priority))),
        };
        // Room for the upload and what accepting it makes, until the job is stored.
        let reserve = witness_room(&loaded, format, &header)?;
        let depth = state.store.depth().await.map_err(store_status)?;
        if depth.queued.iter().sum::<u64>() >= state.config.max_queued {
            return Err(Status::resource_exhausted(format!(
                "the queue is full ({} jobs); retry later",
                state.config.max_queued
            )));
        }
        let reservation = state.budget.try_reserve(reserve).ok_or_else(|| {
            Status::resource_exhausted(format!(
                "witnesses in flight fill this server's budget ({} of {} bytes); retry later",
                state.budget.in_flight(),
                state.budget.total()
            ))
        })?;
        let bytes = receive(&mut chunks, header.witness_bytes, &[], |c: ProveChunk| match c.part {
            Some(proto::prove_chunk::Part::Data(d)) => Ok(d),
            _ => Err(Status::invalid_argument("after the header, a proof request carries only data")),
        })
        .await?;
        let n = loaded.num_variables();
        let witnesses = loaded.witnesses;
        let raw = tokio::task::spawn_blocking(move || match witnesses {
            Witnesses::Assignment => witness::to_stored(format, bytes, n).map_err(|e| e.to_string()),
            // Stored as uploaded: the worker reads it again to make the partitions' witnesses.
            #[cfg(feature = "filecoin")]
            Witnesses::FilecoinC1(proof) => crate::filecoin::check_c1(&bytes, proof, n)
                .map(|()| bytes)
                .map_err(|e| format!("refused as a C1 output for {proof}: {e}")),
        })
        .await
        .map_err(|e| Status::internal(format!("reading the witness: {e}")))?
        .map_err(Status::invalid_argument)?;
        let id = JobId::new_v4();
        let deadline = (header.deadline_ms > 0).then(|| SystemTime::now() + Duration::from_millis(header.deadline_ms));
        let job = NewJob { id, circuit: header.circuit.clone(), priority, deadline, witness: raw };
        state.store.submit(job).await.map_err(store_status)?;
        if state.fleet {
            drop(reservation);
        } else {
            // The witness stays in this server's memory until the job settles.
            state.budget.hold(id, reservation);
            state.unread.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(id);
        }
        state.metrics.accepted();
        state.wake.notify_one();
        Ok(JobAccepted { job_id: id.to_string() })
    }

    async fn record(&self, job: &str) -> Result<JobRecord, Status> {
        let id = job_id(job)?;
        self.state
            .store
            .job(id)
            .await
            .map_err(store_status)?
            .ok_or_else(|| Status::not_found(format!("unknown job {job}")))
    }
}

/// The host memory a witness upload takes until its job is stored, once its announced length
/// is checked against what the circuit takes.
fn witness_room(loaded: &package::Loaded, format: WitnessFormat, header: &proto::ProveHeader) -> Result<u64, Status> {
    let name = &header.circuit;
    match (loaded.witnesses, format) {
        (Witnesses::Assignment, WitnessFormat::FilecoinC1) => Err(Status::invalid_argument(format!(
            "circuit '{name}' is not a Filecoin PoRep circuit: its witness is an assignment (.wtns or raw), not a C1 output"
        ))),
        (Witnesses::Assignment, WitnessFormat::Wtns | WitnessFormat::Raw) => {
            // The raw form is what the store keeps; a .wtns adds a small header on top.
            let expected = loaded.num_variables() as u64 * 32;
            if header.witness_bytes < expected || header.witness_bytes > expected + 4096 {
                return Err(Status::invalid_argument(format!(
                    "a witness of circuit '{name}' has {} values ({expected} bytes raw); {} bytes were announced",
                    loaded.num_variables(),
                    header.witness_bytes
                )));
            }
            // The upload and its raw copy.
            Ok(header.witness_bytes + expected)
        }
        #[cfg(feature = "filecoin")]
        (Witnesses::FilecoinC1(proof), WitnessFormat::FilecoinC1) => {
            use crate::filecoin::MAX_C1_BYTES;
            if header.witness_bytes == 0 || header.witness_bytes > MAX_C1_BYTES {
                return Err(Status::invalid_argument(format!(
                    "a C1 output for circuit '{name}' ({proof}) is 1 byte to {MAX_C1_BYTES} bytes; {} bytes were announced",
                    header.witness_bytes
                )));
            }
            // The upload, and the typed C1 output read from it to check it.
            Ok(header.witness_bytes * 2)
        }
        #[cfg(feature = "filecoin")]
        (Witnesses::FilecoinC1(proof), WitnessFormat::Wtns | WitnessFormat::Raw) => Err(Status::invalid_argument(
            format!("circuit '{name}' is a Filecoin PoRep circuit ({proof}): its witness is a C1 output (WITNESS_FORMAT_FILECOIN_C1)"),
        )),
    }
}

/// The job's id as the API spells it.
fn job_id(text: &str) -> Result<JobId, Status> {
    JobId::parse_str(text).map_err(|_| Status::invalid_argument(format!("'{text}' is not a job id")))
}

/// The status of a package path the server may not read.
fn path_status(e: PathError) -> Status {
    match &e {
        PathError::NoPackageDir | PathError::Outside { .. } => Status::permission_denied(e.to_string()),
        PathError::Missing { .. } => Status::not_found(e.to_string()),
        PathError::Dir { .. } => Status::internal(e.to_string()),
    }
}

/// The `total` bytes of an upload's data chunks, after `prefix`.
async fn receive<M>(
    chunks: &mut Streaming<M>,
    total: u64,
    prefix: &[u8],
    data: impl Fn(M) -> Result<g16_client::Bytes, Status>,
) -> Result<Vec<u8>, Status> {
    let total_usize = usize::try_from(total).map_err(|_| Status::resource_exhausted("too large for this host"))?;
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(prefix.len() + total_usize)
        .map_err(|_| Status::resource_exhausted("no host memory for the upload"))?;
    bytes.extend_from_slice(prefix);
    while let Some(chunk) = chunks.next().await {
        let chunk = data(chunk?)?;
        if bytes.len() - prefix.len() + chunk.len() > total_usize {
            return Err(Status::invalid_argument(format!("more than the {total} bytes announced")));
        }
        bytes.extend_from_slice(&chunk);
    }
    let arrived = bytes.len() - prefix.len();
    if arrived != total_usize {
        return Err(Status::invalid_argument(format!("{arrived} bytes of the {total} announced arrived")));
    }
    Ok(bytes)
}

fn state_of(state: JobState) -> proto::JobState {
    match state {
        JobState::Queued => proto::JobState::Queued,
        JobState::Running => proto::JobState::Running,
        JobState::Succeeded => proto::JobState::Succeeded,
        JobState::Failed => proto::JobState::Failed,
        JobState::Cancelled => proto::JobState::Cancelled,
        JobState::Expired => proto::JobState::Expired,
    }
}

/// A settled job's result, or the status that says why it has none.
fn result_of(record: &JobRecord, verified: bool) -> Result<JobResult, Status> {
    let id = record.id;
    match (&record.state, &record.outcome) {
        (JobState::Succeeded, Some(Outcome::Proved { proof, public_inputs, .. })) => {
            let public = witness::from_raw(public_inputs).map_err(|e| Status::internal(format!("job {id}: {e}")))?;
            let proof = match stored_proof::read(proof) {
                StoredProof::Groth16(proof) => {
                    let decoded = Proof::deserialize_compressed(proof)
                        .map_err(|e| Status::internal(format!("job {id}: its stored proof: {e}")))?;
                    proto::Proof {
                        arkworks: proof.to_vec(),
                        proof_json: proof_json(&decoded),
                        public_json: public_json(&public),
                        filecoin_c2: Vec::new(),
                    }
                }
                StoredProof::FilecoinC2(c2) => proto::Proof { filecoin_c2: c2.to_vec(), ..Default::default() },
            };
            let ms = |a: Option<SystemTime>, b: Option<SystemTime>| match (a, b) {
                (Some(a), Some(b)) => b.duration_since(a).map_or(0.0, |d| d.as_secs_f64() * 1e3),
                _ => 0.0,
            };
            Ok(JobResult {
                job_id: id.to_string(),
                circuit: record.circuit.clone(),
                proof: Some(proof),
                public_inputs: public.iter().map(|x| x.to_string()).collect(),
                verified,
                queued_ms: ms(Some(record.submitted), record.started),
                proving_ms: ms(record.started, record.finished),
                worker: record.worker.clone().unwrap_or_default(),
                attempts: record.attempts,
            })
        }
        (JobState::Failed, Some(Outcome::Failed { code, message })) => {
            Err(Status::new(reason::code(code), format!("job {id}: {message}")))
        }
        (JobState::Cancelled, _) => Err(Status::cancelled(format!("job {id} was cancelled"))),
        (JobState::Expired, _) => {
            Err(Status::deadline_exceeded(format!("job {id}: its deadline passed before a device took it")))
        }
        (state, _) => Err(Status::internal(format!("job {id} is {} without a result", state.name()))),
    }
}

type EventStream = Pin<Box<dyn Stream<Item = Result<JobEvent, Status>> + Send>>;

#[tonic::async_trait]
impl<B: Backend + 'static> Prover for Api<B> {
    async fn register_circuit(
        &self,
        request: Request<Streaming<RegisterChunk>>,
    ) -> Result<Response<CircuitInfo>, Status> {
        self.register(request.into_inner()).await.map(Response::new).map_err(|s| self.refuse(s))
    }

    async fn list_circuits(&self, _: Request<ListCircuitsRequest>) -> Result<Response<ListCircuitsReply>, Status> {
        let summaries = self.state.store.circuits().await.map_err(store_status)?;
        let mut circuits = Vec::new();
        for s in summaries {
            // Loaded here already, or loaded now: the listing says what a witness must hold.
            match self.state.circuit(&s.name).await {
                Ok(loaded) => circuits.push(loaded.info.clone()),
                Err(_) => circuits.push(CircuitInfo {
                    name: s.name,
                    digest: hex(&s.digest),
                    package_bytes: s.package_bytes,
                    ..Default::default()
                }),
            }
        }
        Ok(Response::new(ListCircuitsReply { circuits }))
    }

    async fn preload(&self, request: Request<CircuitRef>) -> Result<Response<ResidentReply>, Status> {
        let name = request.into_inner().name;
        let loaded = self.state.circuit(&name).await.map_err(|s| self.refuse(s))?;
        let state = Arc::clone(&self.state);
        let devices =
            tokio::task::spawn_blocking(move || state.engine.preload(&loaded.key).map(|_| state.engine.resident()))
                .await
                .map_err(|e| Status::internal(e.to_string()))?
                .map_err(|e| self.refuse(Status::resource_exhausted(format!("preloading '{name}': {e}"))))?;
        let devices = devices.into_iter().filter(|(_, keys)| keys.iter().any(|(k, _)| *k == name)).map(|(d, _)| d);
        Ok(Response::new(ResidentReply { devices: devices.collect() }))
    }

    async fn evict(&self, request: Request<CircuitRef>) -> Result<Response<ResidentReply>, Status> {
        let name = request.into_inner().name;
        Ok(Response::new(ResidentReply { devices: self.state.engine.evict(&name) }))
    }

    async fn prove(&self, request: Request<Streaming<ProveChunk>>) -> Result<Response<JobAccepted>, Status> {
        self.accept(request.into_inner()).await.map(Response::new).map_err(|s| self.refuse(s))
    }

    type WatchStream = EventStream;

    async fn watch(&self, request: Request<JobRef>) -> Result<Response<EventStream>, Status> {
        let job = request.into_inner().job_id;
        let first = self.record(&job).await?;
        let (store, verify) = (Arc::clone(&self.state.store), self.state.config.verify);
        let state = Arc::clone(&self.state);
        let (tx, rx) = tokio::sync::mpsc::channel(8);
        tokio::spawn(async move {
            let mut record = first;
            let mut last = None;
            loop {
                if last != Some(record.state) {
                    last = Some(record.state);
                    let mut event = JobEvent {
                        job_id: record.id.to_string(),
                        state: state_of(record.state).into(),
                        worker: record.worker.clone().unwrap_or_default(),
                        result: None,
                    };
                    if record.state.is_final() {
                        state.read(record.id);
                        let sent = match result_of(&record, verify) {
                            Ok(result) => {
                                event.result = Some(result);
                                tx.send(Ok(event)).await
                            }
                            Err(status) => {
                                let _ = tx.send(Ok(event)).await;
                                tx.send(Err(status)).await
                            }
                        };
                        let _ = sent;
                        return;
                    }
                    if tx.send(Ok(event)).await.is_err() {
                        return; // the watcher left
                    }
                }
                tokio::select! {
                    _ = store.changed(record.id, WATCH_STEP) => {}
                    _ = tx.closed() => return,
                }
                record = match store.job(record.id).await {
                    Ok(Some(r)) => r,
                    Ok(None) => return,
                    Err(_) => continue, // the database is away; read again after the next wait
                };
            }
        });
        Ok(Response::new(Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx)) as EventStream))
    }

    async fn r#await(&self, request: Request<JobRef>) -> Result<Response<JobResult>, Status> {
        let job = request.into_inner().job_id;
        let mut record = self.record(&job).await?;
        while !record.state.is_final() {
            self.state.store.changed(record.id, WATCH_STEP).await;
            match self.state.store.job(record.id).await {
                Ok(Some(r)) => record = r,
                Ok(None) => return Err(Status::not_found(format!("unknown job {job}"))),
                Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
            }
        }
        self.state.read(record.id);
        result_of(&record, self.state.config.verify).map(Response::new)
    }

    async fn cancel(&self, request: Request<JobRef>) -> Result<Response<JobEvent>, Status> {
        let job = request.into_inner().job_id;
        let id = job_id(&job)?;
        let state = self
            .state
            .store
            .cancel(id)
            .await
            .map_err(store_status)?
            .ok_or_else(|| Status::not_found(format!("unknown job {job}")))?;
        if let Some(Some(canceller)) = self.state.running().get(&id) {
            canceller.cancel("cancelled by a client");
        }
        if state == JobState::Cancelled {
            self.state.budget.release(id);
            self.state.read(id);
        }
        Ok(Response::new(JobEvent { job_id: job, state: state_of(state).into(), ..Default::default() }))
    }

    async fn timeline(&self, request: Request<TimelineRequest>) -> Result<Response<TimelineReply>, Status> {
        let request = request.into_inner();
        let record = self.record(&request.job_id).await?;
        let Some(Outcome::Proved { timeline, .. }) = &record.outcome else {
            return Err(Status::failed_precondition(format!(
                "job {} is {}: only a proven job has a timeline",
                record.id,
                record.state.name()
            )));
        };
        let timeline = match TimelineFormat::try_from(request.format) {
            Ok(TimelineFormat::Text) => timeline.clone(),
            Ok(TimelineFormat::Chrome) => {
                let events = read_text(timeline.as_slice()).map_err(|e| Status::internal(e.to_string()))?;
                let mut out = Vec::new();
                write_chrome(&events, &mut out).map_err(|e| Status::internal(e.to_string()))?;
                out
            }
            Err(_) => return Err(Status::invalid_argument(format!("unknown timeline format {}", request.format))),
        };
        Ok(Response::new(TimelineReply { timeline }))
    }

    async fn status(&self, _: Request<StatusRequest>) -> Result<Response<ServerStatus>, Status> {
        let state = &self.state;
        let depth = state.store.depth().await.map_err(store_status)?;
        let busy = state.busy_fraction();
        let resident = state.engine.resident();
        let devices = state
            .engine
            .device_time()
            .into_iter()
            .enumerate()
            .map(|(i, d)| {
                let keys =
                    resident.iter().find(|(label, _)| *label == d.label).map(|(_, k)| k.clone()).unwrap_or_default();
                proto::DeviceStatus {
                    name: d.label,
                    backend: d.backend,
                    busy: busy.get(i).copied().unwrap_or(0.0),
                    busy_seconds: d.busy.as_secs_f64(),
                    memory_bytes: d.memory_bytes.unwrap_or(0),
                    resident_bytes: keys.iter().map(|(_, b)| b).sum(),
                    resident_circuits: keys.into_iter().map(|(name, _)| name).collect(),
                }
            })
            .collect();
        Ok(Response::new(ServerStatus {
            queued: depth.queued.to_vec(),
            running: depth.running,
            devices,
            witness_bytes_in_flight: state.budget.in_flight(),
            witness_bytes_budget: state.budget.total(),
            worker: state.config.worker.clone(),
            fleet: state.fleet,
        }))
    }
}

/// Checks `authorization: Bearer <token>` on every call where the server has a token.
#[derive(Clone)]
pub(crate) struct CheckToken(pub Option<Arc<str>>);

impl tonic::service::Interceptor for CheckToken {
    fn call(&mut self, request: Request<()>) -> Result<Request<()>, Status> {
        let Some(token) = &self.0 else { return Ok(request) };
        let given = request.metadata().get("authorization").and_then(|v| v.to_str().ok());
        match given.and_then(|v| v.strip_prefix("Bearer ")) {
            Some(given) if same(given.as_bytes(), token.as_bytes()) => Ok(request),
            Some(_) => Err(Status::new(Code::Unauthenticated, "wrong token")),
            None => Err(Status::new(Code::Unauthenticated, "this server needs 'authorization: Bearer <token>'")),
        }
    }
}

/// Equality whose time does not depend on where the bytes differ.
pub(crate) fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
