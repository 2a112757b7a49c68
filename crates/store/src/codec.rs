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

use super::inbox_item::InboxItem;
use super::{Result, StoreError, StoredOutput};
use safe_outcomes_model::outcome::Confidence;
use safe_outcomes_model::{Actor, EvidenceStrength, Observation, OutcomeStatus, TargetKind};

mod item;
mod observation;
mod outcome;

use item::ItemV3;
use observation::ObservationV3;
use outcome::OutputV3;

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
pub(crate) fn encode_observation(obs: &Observation) -> Vec<u8> {
    pack(&ObservationV3::from(obs))
}

/// An observation in any stored form (v3, or the JSON forms before it).
pub(crate) fn decode_observation(key: &[u8], bytes: &[u8]) -> Result<Observation> {
    decode_any::<ObservationV3, _>(key, bytes)
}

/// A stored output as stored.
pub(crate) fn encode_output(stored: &StoredOutput) -> Vec<u8> {
    pack(&OutputV3::from(stored))
}

/// A stored output in any stored form.
pub(crate) fn decode_output(key: &[u8], bytes: &[u8]) -> Result<StoredOutput> {
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

#[cfg(test)]
mod tests;
