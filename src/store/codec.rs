//! The compact storage encoding of the hot records (observations and stored
//! outputs): postcard over types made for storage, behind a version byte.
//!
//! Records written before (JSON, LZ4-compressed JSON) keep decoding through
//! `store::decode`; everything new under `b/` and `o/` is written here:
//!
//! | first byte | form |
//! |---|---|
//! | `0x03` | postcard of the storage type below |
//! | `0x04` | the same, LZ4-compressed against `DICTIONARY_V3` (when that is smaller) |
//!
//! postcard is not self-describing: it writes fields in order, without names,
//! so serde's `flatten`, internally tagged enums and `skip_serializing_if`
//! do not survive it. The storage types here have none of those; they are
//! converted to and from the model types by hand, so a field added to a model
//! type fails to compile here until it is given a place (a new version byte,
//! since a v3 record has no room for it). The field and variant order of the
//! storage types, and the code tables, are the format: append only.
//!
//! Two shortcuts keep the records small without changing what they decode to:
//! an outcome stores the fields it copies from the execution record (id,
//! type, target, run, workflow, time) only when they differ from it, and a
//! 64-hex-digit body hash is stored as its 32 bytes. An observation's kind is
//! kept as JSON (`ObservationKind`'s own serde, tagged by name): it is a few
//! bytes, and its many variants evolve with serde defaults.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::inbox::InboxItem;
use super::{Result, StoreError, StoredOutput};
use crate::model::execution::Sources;
use crate::model::outcome::{ActorSummary, Confidence, WindowSnapshot};
use crate::model::{
    Actor, EvidenceStrength, ExecutionRecord, ItemSnapshot, Observation, OutcomeRecord,
    OutcomeStatus, Target, TargetKind,
};

/// First byte of a postcard record.
pub(super) const POSTCARD_V3: u8 = 0x03;
/// First byte of an LZ4 (dictionary v1) compressed postcard record.
pub(super) const POSTCARD_V3_LZ4: u8 = 0x04;

/// The records of `DICTIONARY_V1` (an observation of a PR, one of an issue,
/// a stored output) in v3 form: what LZ4 finds repeated in a v3 record.
/// Records compressed against it point into it, so it never changes
/// (`the_v3_dictionary_is_the_v1_records_in_v3_form` pins it).
const DICTIONARY_V3: &[u8] = include_bytes!("record_dictionary_v3.bin");

/// An observation as stored.
pub fn encode_observation(obs: &Observation) -> Vec<u8> {
    pack(&ObservationV3::from(obs))
}

/// An observation in any stored form (v3, or the JSON forms before it).
pub fn decode_observation(key: &[u8], bytes: &[u8]) -> Result<Observation> {
    decode_any::<ObservationV3, _>(key, bytes)
}

/// A stored output as stored.
pub fn encode_output(stored: &StoredOutput) -> Vec<u8> {
    pack(&OutputV3::from(stored))
}

/// A stored output in any stored form.
pub fn decode_output(key: &[u8], bytes: &[u8]) -> Result<StoredOutput> {
    decode_any::<OutputV3, _>(key, bytes)
}

/// An inbox item in v3 form, as the inbox writer stores it (sled and
/// PostgreSQL); `decode_item` also reads the JSON forms before it.
pub fn encode_item(item: &InboxItem) -> Vec<u8> {
    pack(&ItemV3::from(item))
}

/// An inbox item in any stored form.
pub fn decode_item(key: &[u8], bytes: &[u8]) -> Result<InboxItem> {
    decode_any::<ItemV3, _>(key, bytes)
}

/// A storage type of the v3 form, turned back into the model's type.
trait Stored<T> {
    fn into_model(self) -> std::result::Result<T, String>;
}

/// A record in its v3 form `V`, or in any of the JSON forms before it.
fn decode_any<V, T>(key: &[u8], bytes: &[u8]) -> Result<T>
where
    V: Stored<T> + for<'de> Deserialize<'de>,
    T: serde::de::DeserializeOwned,
{
    match unpack::<V>(key, bytes)? {
        Some(v3) => v3.into_model().map_err(|e| corrupt(key, e)),
        None => super::decode(key, bytes),
    }
}

fn corrupt(key: &[u8], error: impl ToString) -> StoreError {
    StoreError::Decode {
        key: String::from_utf8_lossy(key).into_owned(),
        error: error.to_string(),
    }
}

/// postcard, compressed against the dictionary when that is smaller.
fn pack<T: Serialize>(value: &T) -> Vec<u8> {
    let plain = postcard::to_allocvec(value).expect("storage types always serialize");
    if plain.len() > super::COMPRESS_OVER {
        let packed = lz4_flex::block::compress_prepend_size_with_dict(&plain, DICTIONARY_V3);
        if packed.len() + 1 < plain.len() {
            let mut out = Vec::with_capacity(packed.len() + 1);
            out.push(POSTCARD_V3_LZ4);
            out.extend_from_slice(&packed);
            return out;
        }
    }
    let mut out = Vec::with_capacity(plain.len() + 1);
    out.push(POSTCARD_V3);
    out.extend_from_slice(&plain);
    out
}

/// The v3 value of a record, or `None` when it is in an older form.
fn unpack<T: for<'de> Deserialize<'de>>(key: &[u8], bytes: &[u8]) -> Result<Option<T>> {
    let value = match bytes.split_first() {
        Some((&POSTCARD_V3, plain)) => postcard::from_bytes(plain),
        Some((&POSTCARD_V3_LZ4, packed)) => {
            let plain = lz4_flex::block::decompress_size_prepended_with_dict(packed, DICTIONARY_V3)
                .map_err(|e| corrupt(key, e))?;
            postcard::from_bytes(&plain)
        }
        _ => return Ok(None),
    };
    value.map(Some).map_err(|e| corrupt(key, e))
}

/// A time as seconds and nanoseconds since the epoch.
#[derive(Serialize, Deserialize)]
struct Time(i64, u32);

impl From<DateTime<Utc>> for Time {
    fn from(t: DateTime<Utc>) -> Time {
        Time(t.timestamp(), t.timestamp_subsec_nanos())
    }
}

impl Time {
    fn into_model(self) -> std::result::Result<DateTime<Utc>, String> {
        DateTime::from_timestamp(self.0, self.1).ok_or_else(|| format!("bad time {}", self.0))
    }
}

/// A JSON object as its text ("" when empty: most are).
fn json_text(map: &Map<String, Value>) -> String {
    if map.is_empty() {
        String::new()
    } else {
        serde_json::to_string(map).expect("a JSON map serializes")
    }
}

fn json_map(text: &str) -> std::result::Result<Map<String, Value>, String> {
    if text.is_empty() {
        return Ok(Map::new());
    }
    serde_json::from_str(text).map_err(|e| e.to_string())
}

/// A body hash: 32 bytes when it is 64 lower-case hex digits, else its text.
#[derive(Serialize, Deserialize)]
enum Hash {
    Text(String),
    Sha256([u8; 32]),
}

impl From<&str> for Hash {
    fn from(text: &str) -> Hash {
        let mut bytes = [0u8; 32];
        let lower = text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if text.len() == 64 && lower && hex::decode_to_slice(text, &mut bytes).is_ok() {
            Hash::Sha256(bytes)
        } else {
            Hash::Text(text.to_string())
        }
    }
}

impl Hash {
    fn into_model(self) -> String {
        match self {
            Hash::Text(t) => t,
            Hash::Sha256(b) => hex::encode(b),
        }
    }
}

/// Fixed codes of the small model enums (append only).
macro_rules! code_table {
    ($name:ident, $from:ident, $ty:ty, [$($variant:path),+ $(,)?]) => {
        fn $name(v: $ty) -> u8 {
            let table = [$($variant),+];
            table.iter().position(|x| *x == v).expect("every variant is listed") as u8
        }
        fn $from(code: u8) -> std::result::Result<$ty, String> {
            let table = [$($variant),+];
            table
                .get(code as usize)
                .copied()
                .ok_or_else(|| format!("unknown {} code {code}", stringify!($ty)))
        }
    };
}

code_table!(
    kind_code,
    kind_of,
    TargetKind,
    [
        TargetKind::Issue,
        TargetKind::PullRequest,
        TargetKind::Comment,
        TargetKind::Review,
        TargetKind::ReviewComment,
        TargetKind::Discussion,
        TargetKind::DiscussionComment,
        TargetKind::Ref,
        TargetKind::Repository,
        TargetKind::Commit,
        TargetKind::ReviewThread,
        TargetKind::WorkflowRun,
        TargetKind::Workflow,
        TargetKind::CheckRun,
        TargetKind::CodeScanningAlert,
        TargetKind::Release,
        TargetKind::Project,
        TargetKind::ProjectItem,
        TargetKind::Milestone,
    ]
);

code_table!(
    status_code,
    status_of,
    OutcomeStatus,
    [
        OutcomeStatus::Accepted,
        OutcomeStatus::Rejected,
        OutcomeStatus::Pending,
        OutcomeStatus::Ignored,
        OutcomeStatus::Skipped,
        OutcomeStatus::Unknown,
    ]
);

code_table!(
    strength_code,
    strength_of,
    EvidenceStrength,
    [
        EvidenceStrength::Strong,
        EvidenceStrength::Medium,
        EvidenceStrength::Weak,
        EvidenceStrength::None,
    ]
);

code_table!(
    confidence_code,
    confidence_of,
    Confidence,
    [Confidence::High, Confidence::Medium, Confidence::Low]
);

/// `Actor`: login and account type.
#[derive(Serialize, Deserialize)]
struct ActorV3(String, String);

impl From<&Actor> for ActorV3 {
    fn from(a: &Actor) -> ActorV3 {
        ActorV3(a.login.clone(), a.account_type.clone())
    }
}

impl ActorV3 {
    fn into_model(self) -> Actor {
        Actor {
            login: self.0,
            account_type: self.1,
        }
    }
}

#[derive(Serialize, Deserialize)]
struct ObservationV3 {
    id: String,
    at: Time,
    target: String,
    actor: Option<ActorV3>,
    /// `ObservationKind` as JSON.
    event: String,
    snapshot: Option<SnapshotV3>,
}

impl From<&Observation> for ObservationV3 {
    fn from(o: &Observation) -> ObservationV3 {
        ObservationV3 {
            id: o.id.clone(),
            at: o.at.into(),
            target: o.target.clone(),
            actor: o.actor.as_ref().map(ActorV3::from),
            event: serde_json::to_string(&o.event).expect("a kind serializes"),
            snapshot: o.snapshot.as_ref().map(SnapshotV3::from),
        }
    }
}

impl Stored<Observation> for ObservationV3 {
    fn into_model(self) -> std::result::Result<Observation, String> {
        Ok(Observation {
            id: self.id,
            at: self.at.into_model()?,
            target: self.target,
            actor: self.actor.map(ActorV3::into_model),
            event: serde_json::from_str(&self.event).map_err(|e| e.to_string())?,
            snapshot: self.snapshot.map(SnapshotV3::into_model).transpose()?,
        })
    }
}

#[derive(Serialize, Deserialize)]
struct SnapshotV3 {
    kind: Option<u8>,
    state: String,
    state_reason: Option<String>,
    merged: bool,
    draft: bool,
    title: String,
    body_hash: Hash,
    labels: Vec<String>,
    assignees: Vec<String>,
    milestone: Option<String>,
    milestone_number: Option<u64>,
    milestone_absent: bool,
    assignees_absent: bool,
    base: Option<String>,
    head_ref: Option<String>,
    head_sha: Option<String>,
    requested_reviewers: Vec<String>,
    requested_teams: Vec<String>,
    reviewers_known: bool,
    author: Option<ActorV3>,
    merged_by: Option<ActorV3>,
    merge_commit_sha: Option<String>,
    issue_type: Option<String>,
    answer_comment_id: Option<u64>,
}

impl From<&ItemSnapshot> for SnapshotV3 {
    fn from(s: &ItemSnapshot) -> SnapshotV3 {
        SnapshotV3 {
            kind: s.kind.map(kind_code),
            state: s.state.clone(),
            state_reason: s.state_reason.clone(),
            merged: s.merged,
            draft: s.draft,
            title: s.title.clone(),
            body_hash: Hash::from(s.body_hash.as_str()),
            labels: s.labels.clone(),
            assignees: s.assignees.clone(),
            milestone: s.milestone.clone(),
            milestone_number: s.milestone_number,
            milestone_absent: s.milestone_absent,
            assignees_absent: s.assignees_absent,
            base: s.base.clone(),
            head_ref: s.head_ref.clone(),
            head_sha: s.head_sha.clone(),
            requested_reviewers: s.requested_reviewers.clone(),
            requested_teams: s.requested_teams.clone(),
            reviewers_known: s.reviewers_known,
            author: s.author.as_ref().map(ActorV3::from),
            merged_by: s.merged_by.as_ref().map(ActorV3::from),
            merge_commit_sha: s.merge_commit_sha.clone(),
            issue_type: s.issue_type.clone(),
            answer_comment_id: s.answer_comment_id,
        }
    }
}

impl SnapshotV3 {
    fn into_model(self) -> std::result::Result<ItemSnapshot, String> {
        Ok(ItemSnapshot {
            kind: self.kind.map(kind_of).transpose()?,
            state: self.state,
            state_reason: self.state_reason,
            merged: self.merged,
            draft: self.draft,
            title: self.title,
            body_hash: self.body_hash.into_model(),
            labels: self.labels,
            assignees: self.assignees,
            milestone: self.milestone,
            milestone_number: self.milestone_number,
            milestone_absent: self.milestone_absent,
            assignees_absent: self.assignees_absent,
            base: self.base,
            head_ref: self.head_ref,
            head_sha: self.head_sha,
            requested_reviewers: self.requested_reviewers,
            requested_teams: self.requested_teams,
            reviewers_known: self.reviewers_known,
            author: self.author.map(ActorV3::into_model),
            merged_by: self.merged_by.map(ActorV3::into_model),
            merge_commit_sha: self.merge_commit_sha,
            issue_type: self.issue_type,
            answer_comment_id: self.answer_comment_id,
        })
    }
}

#[derive(Serialize, Deserialize, PartialEq)]
struct TargetV3 {
    repo: String,
    kind: u8,
    number: Option<u64>,
    id: Option<u64>,
    node_id: Option<String>,
    url: Option<String>,
    parent_number: Option<u64>,
    git_ref: Option<String>,
    name: Option<String>,
}

impl From<&Target> for TargetV3 {
    fn from(t: &Target) -> TargetV3 {
        TargetV3 {
            repo: t.repo.clone(),
            kind: kind_code(t.kind),
            number: t.number,
            id: t.id,
            node_id: t.node_id.clone(),
            url: t.url.clone(),
            parent_number: t.parent_number,
            git_ref: t.git_ref.clone(),
            name: t.name.clone(),
        }
    }
}

impl TargetV3 {
    fn into_model(self) -> std::result::Result<Target, String> {
        Ok(Target {
            repo: self.repo,
            kind: kind_of(self.kind)?,
            number: self.number,
            id: self.id,
            node_id: self.node_id,
            url: self.url,
            parent_number: self.parent_number,
            git_ref: self.git_ref,
            name: self.name,
        })
    }
}

#[derive(Serialize, Deserialize)]
struct ExecutionV3 {
    id: String,
    output_type: String,
    repo: String,
    run_id: Option<u64>,
    index: Option<u64>,
    workflow: Option<String>,
    target: Option<TargetV3>,
    executed_at: Time,
    actor: Option<String>,
    provider: Option<String>,
    temporary_id: Option<String>,
    before_state: String,
    after_state: String,
    metadata: String,
    labels_added: Vec<String>,
    labels_before: Option<Vec<String>>,
    extra: String,
    /// `Sources`: manifest, webhook.
    sources: (bool, bool),
}

impl From<&ExecutionRecord> for ExecutionV3 {
    fn from(e: &ExecutionRecord) -> ExecutionV3 {
        ExecutionV3 {
            id: e.id.clone(),
            output_type: e.output_type.clone(),
            repo: e.repo.clone(),
            run_id: e.run_id,
            index: e.index,
            workflow: e.workflow.clone(),
            target: e.target.as_ref().map(TargetV3::from),
            executed_at: e.executed_at.into(),
            actor: e.actor.clone(),
            provider: e.provider.clone(),
            temporary_id: e.temporary_id.clone(),
            before_state: json_text(&e.before_state),
            after_state: json_text(&e.after_state),
            metadata: json_text(&e.metadata),
            labels_added: e.labels_added.clone(),
            labels_before: e.labels_before.clone(),
            extra: json_text(&e.extra),
            sources: (e.sources.manifest, e.sources.webhook),
        }
    }
}

impl ExecutionV3 {
    fn into_model(self) -> std::result::Result<ExecutionRecord, String> {
        Ok(ExecutionRecord {
            id: self.id,
            output_type: self.output_type,
            repo: self.repo,
            run_id: self.run_id,
            index: self.index,
            workflow: self.workflow,
            target: self.target.map(TargetV3::into_model).transpose()?,
            executed_at: self.executed_at.into_model()?,
            actor: self.actor,
            provider: self.provider,
            temporary_id: self.temporary_id,
            before_state: json_map(&self.before_state)?,
            after_state: json_map(&self.after_state)?,
            metadata: json_map(&self.metadata)?,
            labels_added: self.labels_added,
            labels_before: self.labels_before,
            extra: json_map(&self.extra)?,
            sources: Sources {
                manifest: self.sources.0,
                webhook: self.sources.1,
            },
        })
    }
}

#[derive(Serialize, Deserialize)]
struct WindowV3 {
    status: u8,
    strength: u8,
    signal: String,
    evaluated_at: Time,
}

/// An outcome record; `None` in the first six fields means "as in the
/// execution record" (what `assess` copies), and in `gh_aw_signal` "as
/// `vocabulary::gh_aw_signal` maps `human_check_signal`".
#[derive(Serialize, Deserialize)]
struct OutcomeV3 {
    safe_output_id: Option<String>,
    safe_output_type: Option<String>,
    target: Option<Option<TargetV3>>,
    run_id: Option<Option<u64>>,
    workflow: Option<Option<String>>,
    created_at: Option<Time>,
    evaluated_at: Time,
    evaluation_window_hours: i64,
    outcome_status: u8,
    evidence_strength: u8,
    human_check_signal: String,
    gh_aw_signal: Option<String>,
    target_resolved: bool,
    confidence: u8,
    bot_aware: bool,
    /// `ActorSummary`: visible non-bot actors, bots.
    actor_summary: (u32, u32),
    details: String,
    notes: String,
    windows: Vec<(String, WindowV3)>,
    time_to_acceptance_hours: Option<f64>,
    dedicated_evaluator: bool,
}

/// The windows as v3 stores them: in name order (`1h`, `24h`, `30d`, `7d`),
/// as they were written when the model kept them in a map by name, so a
/// record encodes to the same bytes as before (`DICTIONARY_V3` and the
/// stored records stay what they were); decoding puts them in time order.
fn stored_windows(windows: &crate::model::Windows) -> Vec<(String, WindowV3)> {
    let mut out: Vec<(String, WindowV3)> = windows
        .iter()
        .map(|(name, w)| {
            let v3 = WindowV3 {
                status: status_code(w.outcome_status),
                strength: strength_code(w.evidence_strength),
                signal: w.human_check_signal.clone(),
                evaluated_at: w.evaluated_at.into(),
            };
            (name.to_string(), v3)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// `Some(value)` unless it equals what it is derived from.
fn unless_same<T: PartialEq + Clone>(value: &T, derived: &T) -> Option<T> {
    (value != derived).then(|| value.clone())
}

impl OutcomeV3 {
    fn new(o: &OutcomeRecord, e: &ExecutionRecord) -> OutcomeV3 {
        let derived_signal = crate::model::signal::gh_aw_word(&o.human_check_signal);
        OutcomeV3 {
            safe_output_id: unless_same(&o.safe_output_id, &e.id),
            safe_output_type: unless_same(&o.safe_output_type, &e.output_type),
            target: (o.target != e.target).then(|| o.target.as_ref().map(TargetV3::from)),
            run_id: unless_same(&o.run_id, &e.run_id),
            workflow: unless_same(&o.workflow, &e.workflow),
            created_at: (o.created_at != e.executed_at).then(|| o.created_at.into()),
            evaluated_at: o.evaluated_at.into(),
            evaluation_window_hours: o.evaluation_window_hours,
            outcome_status: status_code(o.outcome_status),
            evidence_strength: strength_code(o.evidence_strength),
            human_check_signal: o.human_check_signal.clone(),
            gh_aw_signal: (o.gh_aw_signal != derived_signal).then(|| o.gh_aw_signal.clone()),
            target_resolved: o.target_resolved,
            confidence: confidence_code(o.confidence),
            bot_aware: o.bot_aware,
            actor_summary: (
                o.actor_summary.visible_non_bot_actor_count,
                o.actor_summary.bot_actor_count,
            ),
            details: json_text(&o.details),
            notes: o.notes.clone(),
            windows: stored_windows(&o.windows),
            time_to_acceptance_hours: o.time_to_acceptance_hours,
            dedicated_evaluator: o.dedicated_evaluator,
        }
    }

    fn into_model(self, e: &ExecutionRecord) -> std::result::Result<OutcomeRecord, String> {
        let target = match self.target {
            Some(t) => t.map(TargetV3::into_model).transpose()?,
            None => e.target.clone(),
        };
        let gh_aw_signal = self.gh_aw_signal.unwrap_or_else(|| {
            crate::model::signal::gh_aw_word(&self.human_check_signal).to_string()
        });
        let mut windows = crate::model::Windows::new();
        for (name, w) in self.windows {
            let snapshot = WindowSnapshot {
                outcome_status: status_of(w.status)?,
                evidence_strength: strength_of(w.strength)?,
                human_check_signal: w.signal,
                evaluated_at: w.evaluated_at.into_model()?,
            };
            windows.insert(name, snapshot);
        }
        Ok(OutcomeRecord {
            safe_output_id: self.safe_output_id.unwrap_or_else(|| e.id.clone()),
            safe_output_type: self
                .safe_output_type
                .unwrap_or_else(|| e.output_type.clone()),
            target,
            run_id: self.run_id.unwrap_or(e.run_id),
            workflow: self.workflow.unwrap_or_else(|| e.workflow.clone()),
            created_at: match self.created_at {
                Some(t) => t.into_model()?,
                None => e.executed_at,
            },
            evaluated_at: self.evaluated_at.into_model()?,
            evaluation_window_hours: self.evaluation_window_hours,
            outcome_status: status_of(self.outcome_status)?,
            evidence_strength: strength_of(self.evidence_strength)?,
            human_check_signal: self.human_check_signal,
            gh_aw_signal,
            target_resolved: self.target_resolved,
            confidence: confidence_of(self.confidence)?,
            bot_aware: self.bot_aware,
            actor_summary: ActorSummary {
                visible_non_bot_actor_count: self.actor_summary.0,
                bot_actor_count: self.actor_summary.1,
            },
            details: json_map(&self.details)?,
            notes: self.notes,
            windows,
            time_to_acceptance_hours: self.time_to_acceptance_hours,
            dedicated_evaluator: self.dedicated_evaluator,
        })
    }
}

#[derive(Serialize, Deserialize)]
struct OutputV3 {
    execution: ExecutionV3,
    outcome: Option<OutcomeV3>,
    trace_id: Option<String>,
}

impl From<&StoredOutput> for OutputV3 {
    fn from(s: &StoredOutput) -> OutputV3 {
        OutputV3 {
            execution: ExecutionV3::from(&s.execution),
            outcome: s.outcome.as_ref().map(|o| OutcomeV3::new(o, &s.execution)),
            trace_id: s.trace_id.clone(),
        }
    }
}

impl Stored<StoredOutput> for OutputV3 {
    fn into_model(self) -> std::result::Result<StoredOutput, String> {
        let execution = self.execution.into_model()?;
        let outcome = self.outcome.map(|o| o.into_model(&execution)).transpose()?;
        Ok(StoredOutput {
            execution,
            outcome,
            trace_id: self.trace_id,
        })
    }
}

/// `InboxItem`, variant for variant (append only).
#[derive(Serialize, Deserialize)]
enum ItemV3 {
    Delivery {
        delivery_id: String,
        event: String,
        action: Option<String>,
        received_at: Time,
        observations: Vec<ObservationV3>,
        discoveries: Vec<ExecutionV3>,
        /// `InstallationChange` as JSON ("" when none): rare, and small.
        installation_change: String,
    },
    Manifest {
        key: String,
        received_at: Time,
        records: Vec<ExecutionV3>,
    },
    ManifestChunks {
        key: String,
        received_at: Time,
        upload: u64,
        chunks: u32,
    },
    Reconciled {
        output_id: String,
        fetched_at: Time,
        observations: Vec<ObservationV3>,
        failure: Option<String>,
    },
}

impl From<&InboxItem> for ItemV3 {
    fn from(item: &InboxItem) -> ItemV3 {
        let records = |r: &[ExecutionRecord]| -> Vec<ExecutionV3> {
            r.iter().map(ExecutionV3::from).collect()
        };
        let observations = |o: &[Observation]| -> Vec<ObservationV3> {
            o.iter().map(ObservationV3::from).collect()
        };
        match item {
            InboxItem::Delivery {
                delivery_id,
                event,
                action,
                received_at,
                observations: obs,
                discoveries,
                installation_change,
            } => ItemV3::Delivery {
                delivery_id: delivery_id.clone(),
                event: event.clone(),
                action: action.clone(),
                received_at: (*received_at).into(),
                observations: observations(obs),
                discoveries: records(discoveries),
                installation_change: installation_change.as_ref().map_or_else(String::new, |c| {
                    serde_json::to_string(c).expect("a change serializes")
                }),
            },
            InboxItem::Manifest {
                key,
                received_at,
                records: r,
            } => ItemV3::Manifest {
                key: key.clone(),
                received_at: (*received_at).into(),
                records: records(r),
            },
            InboxItem::ManifestChunks {
                key,
                received_at,
                upload,
                chunks,
            } => ItemV3::ManifestChunks {
                key: key.clone(),
                received_at: (*received_at).into(),
                upload: *upload,
                chunks: *chunks,
            },
            InboxItem::Reconciled {
                output_id,
                fetched_at,
                observations: obs,
                failure,
            } => ItemV3::Reconciled {
                output_id: output_id.clone(),
                fetched_at: (*fetched_at).into(),
                observations: observations(obs),
                failure: failure.clone(),
            },
        }
    }
}

impl Stored<InboxItem> for ItemV3 {
    fn into_model(self) -> std::result::Result<InboxItem, String> {
        type Out<T> = std::result::Result<Vec<T>, String>;
        let records = |r: Vec<ExecutionV3>| -> Out<ExecutionRecord> {
            r.into_iter().map(ExecutionV3::into_model).collect()
        };
        let observations = |o: Vec<ObservationV3>| -> Out<Observation> {
            o.into_iter().map(ObservationV3::into_model).collect()
        };
        Ok(match self {
            ItemV3::Delivery {
                delivery_id,
                event,
                action,
                received_at,
                observations: obs,
                discoveries,
                installation_change,
            } => InboxItem::Delivery {
                delivery_id,
                event,
                action,
                received_at: received_at.into_model()?,
                observations: observations(obs)?,
                discoveries: records(discoveries)?,
                installation_change: match installation_change.as_str() {
                    "" => None,
                    text => Some(serde_json::from_str(text).map_err(|e| e.to_string())?),
                },
            },
            ItemV3::Manifest {
                key,
                received_at,
                records: r,
            } => InboxItem::Manifest {
                key,
                received_at: received_at.into_model()?,
                records: records(r)?,
            },
            ItemV3::ManifestChunks {
                key,
                received_at,
                upload,
                chunks,
            } => InboxItem::ManifestChunks {
                key,
                received_at: received_at.into_model()?,
                upload,
                chunks,
            },
            ItemV3::Reconciled {
                output_id,
                fetched_at,
                observations: obs,
                failure,
            } => InboxItem::Reconciled {
                output_id,
                fetched_at: fetched_at.into_model()?,
                observations: observations(obs)?,
                failure,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::observation::PushedCommit;
    use crate::model::ObservationKind;

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    /// An observation with every snapshot field set and a nested kind.
    fn rich_observation() -> Observation {
        Observation {
            id: "d-1/0".into(),
            at: at("2026-09-01T10:00:00.123456789Z"),
            target: "acme/w#12".into(),
            actor: Some(Actor::new("maria-lopez", "User")),
            event: ObservationKind::Pushed {
                git_ref: "refs/heads/main".into(),
                before: "a".repeat(40),
                after: "b".repeat(40),
                forced: true,
                commits: vec![PushedCommit {
                    sha: "c".repeat(40),
                    message: "Fix".into(),
                    added: vec!["a.rs".into()],
                    modified: vec![],
                    removed: vec!["b.rs".into()],
                }],
            },
            snapshot: Some(ItemSnapshot {
                kind: Some(TargetKind::PullRequest),
                state: "closed".into(),
                state_reason: Some("completed".into()),
                merged: true,
                draft: true,
                title: "Ünïcode title".into(),
                body_hash: crate::model::observation::body_hash("body"),
                labels: vec!["bug".into(), "ci".into()],
                assignees: vec!["alice".into()],
                milestone: Some("v1".into()),
                milestone_number: Some(3),
                milestone_absent: true,
                assignees_absent: true,
                base: Some("main".into()),
                head_ref: Some("fix".into()),
                head_sha: Some("d".repeat(40)),
                requested_reviewers: vec!["bob".into()],
                requested_teams: vec!["core".into()],
                reviewers_known: true,
                author: Some(Actor::new("github-actions[bot]", "Bot")),
                merged_by: Some(Actor::new("alice", "User")),
                merge_commit_sha: Some("e".repeat(40)),
                issue_type: Some("Bug".into()),
                answer_comment_id: Some(9),
            }),
        }
    }

    /// The dictionary's stored output (a typical one), given a trace id.
    fn typical_output() -> StoredOutput {
        let text = std::str::from_utf8(super::super::DICTIONARY_V1).unwrap();
        let mut stored: StoredOutput = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        stored.trace_id = Some("0af7651916cd43dd8448eb211c80319c".into());
        stored
    }

    /// Older forms of a record: plain JSON, LZ4, LZ4 with the dictionary.
    fn older_forms<T: Serialize>(value: &T) -> Vec<Vec<u8>> {
        let json = serde_json::to_vec(value).unwrap();
        let mut lz4 = vec![super::super::LZ4_RECORD];
        lz4.extend(lz4_flex::compress_prepend_size(&json));
        let dict = super::super::encode(value);
        assert_eq!(dict[0], super::super::LZ4_DICT_V1);
        vec![json, lz4, dict]
    }

    #[test]
    fn observations_round_trip_whole() {
        let obs = rich_observation();
        let bytes = encode_observation(&obs);
        assert!(matches!(bytes[0], POSTCARD_V3 | POSTCARD_V3_LZ4));
        assert_eq!(decode_observation(b"k", &bytes).unwrap(), obs);
        let mut bare = obs.clone();
        bare.actor = None;
        bare.snapshot = None;
        bare.event = ObservationKind::Opened;
        bare.at = at("1969-12-31T23:59:59.5Z");
        let bytes = encode_observation(&bare);
        assert_eq!(bytes[0], POSTCARD_V3, "small records are not compressed");
        assert_eq!(decode_observation(b"k", &bytes).unwrap(), bare);
    }

    #[test]
    fn a_body_hash_that_is_not_sha256_hex_is_kept_as_text() {
        for hash in ["", "ABCDEF", &"A".repeat(64), &"0".repeat(63)] {
            let mut obs = rich_observation();
            obs.snapshot.as_mut().unwrap().body_hash = hash.to_string();
            let back = decode_observation(b"k", &encode_observation(&obs)).unwrap();
            assert_eq!(back.snapshot.unwrap().body_hash, hash);
        }
    }

    #[test]
    fn stored_outputs_round_trip_whole_including_fields_that_differ_from_the_execution() {
        let stored = typical_output();
        let bytes = encode_output(&stored);
        assert_eq!(decode_output(b"k", &bytes).unwrap(), stored);

        let mut odd = stored.clone();
        odd.execution
            .metadata
            .insert("k".into(), serde_json::json!({"a": [1, 2.5, null]}));
        odd.execution
            .extra
            .insert("x".into(), serde_json::json!("y"));
        odd.execution.labels_before = Some(vec![]);
        let outcome = odd.outcome.as_mut().unwrap();
        outcome.safe_output_id = "older-id".into();
        outcome.safe_output_type = "other".into();
        outcome.target = None;
        outcome.run_id = None;
        outcome.workflow = Some("renamed".into());
        outcome.created_at = at("2020-01-01T00:00:00Z");
        outcome.gh_aw_signal = String::new();
        outcome.time_to_acceptance_hours = Some(1.25);
        assert_eq!(decode_output(b"k", &encode_output(&odd)).unwrap(), odd);

        let mut bare = stored;
        bare.outcome = None;
        bare.trace_id = None;
        assert_eq!(decode_output(b"k", &encode_output(&bare)).unwrap(), bare);
    }

    #[test]
    fn records_in_every_older_form_still_decode() {
        let obs = rich_observation();
        for bytes in older_forms(&obs) {
            assert_eq!(decode_observation(b"k", &bytes).unwrap(), obs);
        }
        let stored = typical_output();
        for bytes in older_forms(&stored) {
            assert_eq!(decode_output(b"k", &bytes).unwrap(), stored);
        }
    }

    #[test]
    fn the_v3_form_is_smaller_than_the_dictionary_json_form() {
        let obs = rich_observation();
        // Other values than the dictionary's own record (which the
        // dictionary holds verbatim).
        let text = serde_json::to_string(&typical_output())
            .unwrap()
            .replace("acme/widgets", "globex/payments-api")
            .replace("2101", "88231")
            .replace("ci-coach", "dependency-updater");
        let stored: StoredOutput = serde_json::from_str(&text).unwrap();
        let (o3, o2) = (
            encode_observation(&obs).len(),
            super::super::encode(&obs).len(),
        );
        let (s3, s2) = (
            encode_output(&stored).len(),
            super::super::encode(&stored).len(),
        );
        eprintln!("observation {o2} → {o3} B, stored output {s2} → {s3} B");
        assert!(o3 < o2 && s3 < s2);
    }

    const PINNED: &str = "03642f300202056f2f7223310101610455736572117b226b696e64223a22636c6f736564227d010100046f70656e0000000000000000000000000000000000000000000000";

    /// The v1 dictionary's records in v3 form, one after the other.
    fn dictionary_v3() -> Vec<u8> {
        let text = std::str::from_utf8(super::super::DICTIONARY_V1).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let mut out = Vec::new();
        for line in &lines[..2] {
            let obs: Observation = serde_json::from_str(line).unwrap();
            out.extend(postcard::to_allocvec(&ObservationV3::from(&obs)).unwrap());
        }
        let stored: StoredOutput = serde_json::from_str(lines[2]).unwrap();
        out.extend(postcard::to_allocvec(&OutputV3::from(&stored)).unwrap());
        out
    }

    #[test]
    fn the_v3_dictionary_is_the_v1_records_in_v3_form() {
        assert_eq!(DICTIONARY_V3, dictionary_v3().as_slice());
    }

    /// Writes `record_dictionary_v3.bin` (once; it must never change after).
    #[test]
    #[ignore]
    fn write_dictionary_v3() {
        std::fs::write("src/store/record_dictionary_v3.bin", dictionary_v3()).unwrap();
    }

    #[test]
    fn the_v3_layout_is_pinned() {
        // Field order, code tables and the time form are the format: a
        // change here means a new version byte, not an edit.
        let obs = Observation {
            id: "d/0".into(),
            at: DateTime::from_timestamp(1, 2).unwrap(),
            target: "o/r#1".into(),
            actor: Some(Actor::new("a", "User")),
            event: ObservationKind::Closed,
            snapshot: Some(ItemSnapshot {
                kind: Some(TargetKind::Issue),
                state: "open".into(),
                ..ItemSnapshot::default()
            }),
        };
        let plain = postcard::to_allocvec(&ObservationV3::from(&obs)).unwrap();
        assert_eq!(hex::encode(&plain), PINNED);
        let mut bytes = vec![POSTCARD_V3];
        bytes.extend(&plain);
        assert_eq!(decode_observation(b"k", &bytes).unwrap(), obs);
        assert_eq!(
            decode_observation(b"k", &encode_observation(&obs)).unwrap(),
            obs
        );
    }

    #[test]
    fn a_store_written_by_the_previous_version_reads_and_upgrades_as_it_is_written() {
        use crate::store::{keys, ReadStore, Store};
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let stored = typical_output();
        let id = stored.execution.id.clone();
        let obs = rich_observation();
        // As the previous version wrote them: JSON, LZ4 against the v1 dictionary.
        let db = store.db();
        db.insert(keys::output(&id), super::super::encode(&stored))
            .unwrap();
        db.insert(
            keys::observation(&obs.target, obs.at, &obs.id),
            super::super::encode(&obs),
        )
        .unwrap();
        drop(store);

        let store = Store::open(dir.path()).unwrap();
        let targets = [obs.target.clone()];
        assert_eq!(store.output(&id).unwrap().as_ref(), Some(&stored));
        assert_eq!(store.outputs("", None).next().unwrap().unwrap(), stored);
        assert_eq!(
            store.observations(&targets).unwrap(),
            std::slice::from_ref(&obs)
        );
        let unit = store.begin();
        assert_eq!(unit.output(&id).unwrap().as_ref(), Some(&stored));
        assert_eq!(
            unit.observations_of_all(&targets).unwrap(),
            std::slice::from_ref(&obs)
        );

        // Written again, they take the v3 form and read the same.
        let mut unit = store.begin();
        unit.put_output_record(&stored).unwrap();
        unit.put_observation(&obs.target, &obs);
        unit.commit().unwrap();
        let raw = store.get_raw(&keys::output(&id)).unwrap().unwrap();
        assert!(matches!(raw[0], POSTCARD_V3 | POSTCARD_V3_LZ4));
        assert_eq!(store.output(&id).unwrap(), Some(stored));
        assert_eq!(store.observations(&targets).unwrap(), [obs]);
    }

    #[test]
    fn inbox_items_round_trip_in_v3_and_older_forms() {
        let change = crate::model::installation::InstallationChange {
            installation_id: 7,
            action: crate::model::installation::InstallationAction::ReposAdded,
            account: Some("acme".into()),
            account_id: None,
            repos_added: vec!["acme/w".into()],
            repos_removed: vec![],
        };
        let items = [
            InboxItem::Delivery {
                delivery_id: "d-1".into(),
                event: "push".into(),
                action: None,
                received_at: at("2026-09-01T10:00:00Z"),
                observations: vec![rich_observation(), rich_observation()],
                discoveries: vec![typical_output().execution],
                installation_change: Some(change),
            },
            InboxItem::Delivery {
                delivery_id: "d-2".into(),
                event: "issues".into(),
                action: Some("labeled".into()),
                received_at: at("2026-09-01T10:00:00Z"),
                observations: vec![],
                discoveries: vec![],
                installation_change: None,
            },
            InboxItem::Manifest {
                key: "m".into(),
                received_at: at("2026-09-01T10:00:01Z"),
                records: vec![typical_output().execution],
            },
            InboxItem::ManifestChunks {
                key: "c".into(),
                received_at: at("2026-09-01T10:00:02Z"),
                upload: 3,
                chunks: 4,
            },
            InboxItem::Reconciled {
                output_id: "o".into(),
                fetched_at: at("2026-09-01T10:00:03Z"),
                observations: vec![rich_observation()],
                failure: Some("boom".into()),
            },
        ];
        for item in items {
            let v3 = encode_item(&item);
            assert!(matches!(v3[0], POSTCARD_V3 | POSTCARD_V3_LZ4));
            assert!(v3.len() < super::super::encode(&item).len());
            assert_eq!(decode_item(b"k", &v3).unwrap(), item);
            for bytes in older_forms(&item) {
                assert_eq!(decode_item(b"k", &bytes).unwrap(), item);
            }
        }
    }

    #[test]
    fn corrupt_v3_records_are_decode_errors() {
        for bytes in [
            &[POSTCARD_V3, 0xff][..],
            &[POSTCARD_V3_LZ4, 9, 9],
            &[POSTCARD_V3],
        ] {
            assert!(matches!(
                decode_observation(b"k", bytes),
                Err(StoreError::Decode { .. })
            ));
            assert!(matches!(
                decode_output(b"k", bytes),
                Err(StoreError::Decode { .. })
            ));
        }
    }
}
