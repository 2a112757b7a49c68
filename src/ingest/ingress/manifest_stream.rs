//! Reading a manifest body as it arrives: frames are cut into lines (each
//! capped), lines parsed into records, and records staged in bounded chunks
//! (`store::staging`). Nothing holds the whole body or all of its records;
//! the answer keeps only counts and the first few ids and rejected lines.
//! Every record passes the tenancy rule against the run's repository
//! (`ingest::tenancy`) before it is staged: a line outside the run's
//! installation is rejected with the reason, like a line that does not parse.

use std::collections::BTreeMap;

use axum::body::Body;
use axum::http::StatusCode;
use http_body_util::BodyExt;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::body_error;
use super::limits::Limits;
use super::{ApiError, MAX_BODY};
use crate::ingest::manifest::{LineParser, LineSplitter, RawLine, RejectedLine};
use crate::ingest::tenancy::ManifestTenancy;
use crate::model::ExecutionRecord;
use crate::store::{staging, Store};

pub(crate) use super::limits::{CHUNK_LINE_BYTES, CHUNK_RECORDS};
/// Bytes fed to the splitter at a time, so a chunk is staged before the
/// next piece is parsed whatever the size of the frames.
const PIECE: usize = 16 * 1024;
/// Output ids listed in the answer; the rest are counted.
pub(crate) const ECHO_OUTPUTS: usize = 1000;
/// Rejected lines listed in the answer; the rest are counted.
pub(crate) const ECHO_REJECTED: usize = 100;

/// Checks each record before it is staged (the OIDC token's repository).
pub(crate) type RecordCheck<'a> =
    dyn Fn(&ExecutionRecord) -> Result<(), ApiError> + Send + Sync + 'a;

/// One manifest post being read into an upload.
pub(crate) struct StreamedManifest<'a> {
    store: Store,
    limits: &'a Limits,
    check: &'a RecordCheck<'a>,
    splitter: LineSplitter,
    parser: LineParser,
    tenancy: ManifestTenancy,
    digest: Sha256,
    read: usize,
    pub upload: u64,
    pub chunks: u32,
    chunk: Vec<ExecutionRecord>,
    chunk_bytes: usize,
    /// Chunks filled by the last piece, waiting to be staged.
    full: Vec<Vec<ExecutionRecord>>,
    pub accepted: usize,
    outputs: Vec<String>,
    rejected: Vec<RejectedLine>,
    pub rejected_total: usize,
    /// Lines rejected as outside the run's installation (in `rejected` too),
    /// by `Refusal::kind`.
    pub outside_installation: BTreeMap<&'static str, usize>,
    /// Kept (committed) or discarded already: nothing for `Drop` to do.
    settled: bool,
}

impl<'a> StreamedManifest<'a> {
    /// `salt` goes into the digest before the body (the post's defaults).
    pub fn new(
        store: &Store,
        limits: &'a Limits,
        parser: LineParser,
        salt: &str,
        check: &'a RecordCheck<'a>,
    ) -> Result<StreamedManifest<'a>, ApiError> {
        let mut digest = Sha256::new();
        digest.update(salt.as_bytes());
        // Bound to the store's files open now: chunks staged before the
        // store reopened after an I/O error (`store::heal`) may be lost
        // with sled's unflushed writes, so the upload fails (503) rather
        // than be acknowledged without them.
        let store = &store.pinned();
        let tenancy = ManifestTenancy::new(store, parser.run_repo().map(str::to_string));
        Ok(StreamedManifest {
            store: store.clone(),
            limits,
            check,
            splitter: LineSplitter::new(limits.manifest_max_line_bytes),
            parser,
            tenancy,
            digest,
            read: 0,
            upload: staging::new_upload(store)?,
            chunks: 0,
            chunk: Vec::new(),
            chunk_bytes: 0,
            full: Vec::new(),
            accepted: 0,
            outputs: Vec::new(),
            rejected: Vec::new(),
            rejected_total: 0,
            outside_installation: BTreeMap::new(),
            settled: false,
        })
    }

    /// Read the whole body, staging its records. On an error the caller
    /// discards the upload.
    pub async fn read(&mut self, mut body: Body) -> Result<(), ApiError> {
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| body_error(&e))?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            self.read += data.len();
            if self.read > MAX_BODY {
                return Err(ApiError::too_large(MAX_BODY));
            }
            self.digest.update(&data);
            for piece in data.chunks(PIECE) {
                let mut splitter = std::mem::replace(&mut self.splitter, LineSplitter::new(0));
                let pushed = splitter.push(piece, &mut |line| self.take(line));
                self.splitter = splitter;
                pushed?;
                self.stage().await?;
            }
        }
        let mut splitter = std::mem::replace(&mut self.splitter, LineSplitter::new(0));
        splitter.finish(&mut |line| self.take(line))?;
        self.close_chunk();
        self.stage().await
    }

    /// One line: count it, and keep its record or why it was rejected.
    fn take(&mut self, line: RawLine<'_>) -> Result<(), ApiError> {
        let parsed = self.parser.parse(line);
        if self.parser.items() > self.limits.manifest_max_lines {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "too_many_lines",
                format!(
                    "the manifest has more than {} lines (line {} is one too many); nothing was stored",
                    self.limits.manifest_max_lines, line.number
                ),
            ));
        }
        let parsed = match parsed {
            Some(Ok(record)) => {
                (self.check)(&record)?;
                match self.tenancy.check(&record)? {
                    Ok(()) => Some(Ok(record)),
                    Err(refusal) => {
                        *self.outside_installation.entry(refusal.kind()).or_default() += 1;
                        Some(Err(RejectedLine {
                            line: line.number,
                            error: format!("{refusal}; nothing was stored for this line"),
                        }))
                    }
                }
            }
            other => other,
        };
        match parsed {
            Some(Ok(record)) => {
                self.accepted += 1;
                if self.outputs.len() < ECHO_OUTPUTS {
                    self.outputs.push(record.id.clone());
                }
                self.chunk_bytes += line.len;
                self.chunk.push(record);
                if self.chunk.len() >= CHUNK_RECORDS || self.chunk_bytes >= CHUNK_LINE_BYTES {
                    self.close_chunk();
                }
            }
            Some(Err(rejected)) => {
                self.rejected_total += 1;
                if self.rejected.len() < ECHO_REJECTED {
                    self.rejected.push(rejected);
                }
            }
            None => {}
        }
        Ok(())
    }

    /// The records gathered so far are a chunk, to be staged.
    fn close_chunk(&mut self) {
        if !self.chunk.is_empty() {
            self.full.push(std::mem::take(&mut self.chunk));
        }
        self.chunk_bytes = 0;
    }

    /// Write the closed chunks, in order.
    async fn stage(&mut self) -> Result<(), ApiError> {
        let full = std::mem::take(&mut self.full);
        if full.is_empty() {
            return Ok(());
        }
        let (store, upload, first) = (self.store.clone(), self.upload, self.chunks);
        let count = full.len() as u32;
        tokio::task::spawn_blocking(move || {
            full.iter()
                .zip(first..)
                .try_for_each(|(records, chunk)| staging::put_chunk(&store, upload, chunk, records))
        })
        .await
        .map_err(|e| ApiError::internal(e.to_string()))??;
        self.chunks += count;
        Ok(())
    }

    /// The digest of the salt and the body: the post's dedupe key.
    pub fn key(&self) -> String {
        hex::encode(self.digest.clone().finalize())
    }

    /// The rejected lines listed in the answer.
    pub(crate) fn rejected_json(&self) -> Value {
        self.rejected
            .iter()
            .map(|r| json!({"line": r.line, "error": r.error}))
            .collect()
    }

    /// How many lines were rejected as outside the run's installation.
    pub(crate) fn outside_installation_total(&self) -> usize {
        self.outside_installation.values().sum()
    }

    /// The ids listed in the answer, and how many were left out.
    pub(crate) fn outputs_json(&self) -> (Value, usize) {
        (json!(self.outputs), self.accepted - self.outputs.len())
    }

    /// The upload goes to the inbox writer: whether it is committed is the
    /// writer's to say, and a dropped handler must not discard it. Its
    /// chunks are made durable first (`staging::make_durable`): the writer's
    /// commit, which acknowledges the upload, is of the inbox's journal only.
    pub async fn keep(&mut self) -> Result<(), ApiError> {
        self.settled = true;
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || staging::make_durable(&store))
            .await
            .map_err(|e| ApiError::internal(e.to_string()))??;
        Ok(())
    }

    /// Remove whatever was staged (a refused or failed post), before the
    /// answer goes out.
    pub(crate) async fn discard(&mut self) {
        self.settled = true;
        let (store, upload) = (self.store.clone(), self.upload);
        let removed = tokio::task::spawn_blocking(move || staging::discard(&store, upload)).await;
        if !matches!(removed, Ok(Ok(()))) {
            // Left for the sweep once its lease runs out: not committed.
            tracing::warn!(upload, "could not discard a refused manifest's chunks");
        }
    }
}

impl Drop for StreamedManifest<'_> {
    /// A handler dropped midway (its client went away while it waited):
    /// discard in the background rather than leave chunks until a restart.
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        let (store, upload) = (self.store.clone(), self.upload);
        let discard = move || {
            if staging::discard(&store, upload).is_err() {
                tracing::warn!(upload, "could not discard an abandoned manifest's chunks");
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(discard)),
            Err(_) => discard(),
        }
    }
}
