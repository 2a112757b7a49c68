//! Normalizes one webhook delivery into observations (facts about a target,
//! with GitHub's own timestamps) and discoveries (gh-aw outputs recognized by
//! their body markers).
//!
//! GitHub keeps adding events and actions, so anything unknown or oddly shaped
//! is `Ignored` with a reason, never an error: only a body that is not a JSON
//! object is an error.

mod comments;
mod discovery;
mod discussions;
mod installations;
mod milestones;
mod nesting;
mod organizations;
mod payload;
mod projects;
mod push;
mod releases;
mod repositories;
mod reviews;
mod security;
mod sub_issues;
mod teams;
mod threads;
mod workflows;

/// What a commit message or a revert PR's body says it reverts: the API
/// answers (`ingest::reconcile`) read reverts with the same words.
pub(crate) use push::reverted_sha;
pub(crate) use threads::reverted_pr;
pub(crate) use workflows::{workflow_file, workflow_stem};

use chrono::{DateTime, Utc};

use crate::model::ident;
use crate::model::installation::{InstallationAction, InstallationChange};
use crate::model::target::thread_key;
use crate::model::{ExecutionRecord, ItemSnapshot, Observation, ObservationKind};
use nesting::{too_deep, MAX_DEPTH};
use payload::Payload;
use serde::de::IgnoredAny;
use serde_json::Value;

/// What one delivery told us.
#[derive(Debug, Clone, PartialEq)]
pub struct NormalizedDelivery {
    pub event: String,
    pub action: Option<String>,
    pub repo: Option<String>,
    pub installation_id: Option<u64>,
    pub observations: Vec<Observation>,
    pub discoveries: Vec<ExecutionRecord>,
    /// The payload carries no time of its own (`membership`): its facts are
    /// dated when the delivery is received (`http::webhook`).
    pub dated_at_receipt: bool,
    /// What the delivery says about the App's installations: the change of an
    /// `installation`/`installation_repositories` event, or for any other
    /// event the installation its repository belongs to (`Seen`).
    pub installation_change: Option<InstallationChange>,
}

// One value per delivery, moved once into the inbox: boxing would only add an
// allocation to the common case.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Normalized {
    Relevant(NormalizedDelivery),
    Ignored { reason: String },
}

#[derive(thiserror::Error, Debug)]
pub enum WebhookError {
    #[error("malformed JSON: {0}")]
    MalformedJson(String),
    #[error("payload is not a JSON object")]
    NotAnObject,
    /// A time field outside the sane range (`sane_time`): nothing is stored.
    #[error(transparent)]
    TimeOutOfRange(#[from] crate::model::sane_time::OutOfRange),
    /// A name the delivery would carry into a store key (its repository,
    /// an installation's repositories, a branch, a tag, …) fails the
    /// `model::ident` rules: nothing is stored.
    #[error("`{field}` is refused: {error}")]
    BadName {
        field: String,
        error: crate::model::ident::IdentError,
    },
}

impl WebhookError {
    fn bad_name(field: impl Into<String>) -> impl FnOnce(ident::IdentError) -> WebhookError {
        let field = field.into();
        |error| WebhookError::BadName { field, error }
    }
}

/// A family's normalizer of one event; `Err` is why the delivery is ignored.
type Normalizer = fn(&Ctx) -> NormResult;

/// A family's table: each event it normalizes, with its normalizer.
type Events = &'static [(&'static str, Normalizer)];

/// Every family, named once. Each declares the events it normalizes in its
/// own file (`EVENTS`), so a new event of a family is one row there. The
/// installation events are `installations::EVENTS`: they change the App's
/// installations rather than a target, and are read before the payload.
const FAMILIES: &[Events] = &[
    threads::EVENTS,
    comments::EVENTS,
    reviews::EVENTS,
    push::EVENTS,
    discussions::EVENTS,
    projects::EVENTS,
    sub_issues::EVENTS,
    milestones::EVENTS,
    workflows::EVENTS,
    security::EVENTS,
    releases::EVENTS,
    repositories::EVENTS,
    organizations::EVENTS,
    teams::EVENTS,
];

/// The events normalized into observations (every family's, in `FAMILIES`'
/// order); others are acknowledged and ignored.
pub const HANDLED_EVENTS: &[&str] = &handled_events();

const HANDLED_COUNT: usize = {
    let (mut n, mut f) = (0, 0);
    while f < FAMILIES.len() {
        n += FAMILIES[f].len();
        f += 1;
    }
    n
};

const fn handled_events() -> [&'static str; HANDLED_COUNT] {
    let mut out = [""; HANDLED_COUNT];
    let (mut n, mut f) = (0, 0);
    while f < FAMILIES.len() {
        let mut e = 0;
        while e < FAMILIES[f].len() {
            out[n] = FAMILIES[f][e].0;
            n += 1;
            e += 1;
        }
        f += 1;
    }
    out
}

/// The normalizer of `event`, from the families' tables.
fn normalizer_of(event: &str) -> Option<Normalizer> {
    FAMILIES
        .iter()
        .flat_map(|family| family.iter())
        .find(|(name, _)| *name == event)
        .map(|(_, normalizer)| *normalizer)
}

/// Normalize a delivery (`X-GitHub-Event`, `X-GitHub-Delivery`, raw body).
pub fn normalize(event: &str, delivery_id: &str, body: &[u8]) -> Result<Normalized, WebhookError> {
    // JSON is UTF-8; checking the whole body up front also covers strings the
    // typed parse below skips without reading.
    let text = std::str::from_utf8(body)
        .map_err(|e| WebhookError::MalformedJson(format!("the body is not UTF-8: {e}")))?;
    if too_deep(text) {
        return Err(WebhookError::MalformedJson(format!(
            "nesting deeper than {MAX_DEPTH} levels"
        )));
    }
    if !text.trim_start().starts_with('{') {
        return Err(match serde_json::from_str::<IgnoredAny>(text) {
            Ok(_) => WebhookError::NotAnObject,
            Err(e) => WebhookError::MalformedJson(e.to_string()),
        });
    }
    if installations::EVENTS.contains(&event) {
        let value: Value =
            serde_json::from_str(text).map_err(|e| WebhookError::MalformedJson(e.to_string()))?;
        return Ok(match installations::normalize(event, &value)? {
            Err(reason) => ignored(reason),
            Ok(change) => Normalized::Relevant(NormalizedDelivery {
                event: event.to_string(),
                action: value["action"].as_str().map(str::to_string),
                repo: None,
                dated_at_receipt: false,
                installation_id: Some(change.installation_id),
                observations: Vec::new(),
                discoveries: Vec::new(),
                installation_change: Some(change),
            }),
        });
    }
    let Some(normalizer) = normalizer_of(event) else {
        // Still refuse a body that is not JSON at all.
        serde_json::from_str::<IgnoredAny>(text)
            .map_err(|e| WebhookError::MalformedJson(e.to_string()))?;
        let reason = match event {
            "ping" => format!("event `{event}` is not handled yet"),
            _ => format!("unknown event `{event}`"),
        };
        return Ok(ignored(reason));
    };
    // Straight from the text into the few fields we read: building a
    // `serde_json::Value` of a 28 KB payload costs several times more.
    let payload: Payload = match serde_json::from_str(text) {
        Ok(p) => p,
        Err(e) => {
            return match serde_json::from_str::<IgnoredAny>(text) {
                Err(e) => Err(WebhookError::MalformedJson(e.to_string())),
                Ok(_) => Ok(ignored(format!("unexpected `{event}` payload shape: {e}"))),
            }
        }
    };
    payload.check_times()?;
    let raw = RawBody::new(text);
    let Some(repo) = payload
        .repository
        .as_ref()
        .and_then(|r| r.slug())
        .or_else(|| owner_without_repo(event, raw.value()))
    else {
        return Ok(ignored(format!("`{event}` delivery names no repository")));
    };
    if payload.repository.as_ref().and_then(|r| r.slug()).is_some() {
        ident::repo(&repo).map_err(WebhookError::bad_name("repository.full_name"))?;
    } else {
        ident::owner(&repo).map_err(WebhookError::bad_name("organization.login"))?;
    }
    let ctx = Ctx {
        event,
        repo: &repo,
        p: &payload,
        raw,
    };
    let result = normalizer(&ctx);
    if let Ok(out) = &result {
        out.check_keys()?;
    }
    let repo_id = payload.repository.as_ref().and_then(|r| r.id);
    Ok(match result {
        Err(reason) => ignored(reason),
        Ok(out) => Normalized::Relevant(NormalizedDelivery {
            event: event.to_string(),
            action: payload.action.clone(),
            repo: Some(repo.clone()),
            dated_at_receipt: out.observations.iter().any(|f| f.at == UNDATED),
            installation_id: payload.installation.as_ref().and_then(|i| i.id),
            installation_change: payload.installation.as_ref().and_then(|i| i.id).map(|id| {
                let (action, renamed_from) = match &out.rename {
                    Some(r) if r.owner => (InstallationAction::OwnerRenamed, Some(r.from.clone())),
                    Some(r) => (InstallationAction::RepoRenamed, Some(r.from.clone())),
                    None => (InstallationAction::Seen, None),
                };
                // An owner's rename is the installation's account's: it
                // names the login now, and no repository.
                let owner = action == InstallationAction::OwnerRenamed;
                InstallationChange {
                    installation_id: id,
                    action,
                    account: owner.then(|| repo.clone()),
                    account_id: None,
                    repos_added: if owner {
                        Vec::new()
                    } else {
                        vec![repo.clone()]
                    },
                    repos_removed: Vec::new(),
                    repo_id,
                    renamed_from,
                }
            }),
            observations: out
                .observations
                .into_iter()
                .enumerate()
                .map(|(n, f)| f.into_observation(delivery_id, n, &payload))
                .collect(),
            discoveries: out.discoveries,
        }),
    })
}

/// For the mangled-field tests: every top-level field of `base`, and every
/// field one level down, replaced in turn by each kind of junk (null, numbers,
/// a string, an empty array or object) must normalize or be refused as a
/// time out of range in that very field: never another error, never a panic.
/// `extra`: deeper paths to mangle too (a number indexes an array).
#[cfg(test)]
pub(crate) fn assert_mangled_fields_normalize(
    event: &str,
    file: &str,
    base: &serde_json::Value,
    extra: &[&[&str]],
) {
    let junk = [
        serde_json::Value::Null,
        42.into(),
        (-1).into(),
        "x".into(),
        serde_json::json!([]),
        serde_json::json!({}),
    ];
    let mut paths: Vec<Vec<String>> = Vec::new();
    for (k, v) in base.as_object().unwrap() {
        paths.push(vec![k.clone()]);
        for k2 in v.as_object().into_iter().flat_map(|o| o.keys()) {
            paths.push(vec![k.clone(), k2.clone()]);
        }
    }
    paths.extend(
        extra
            .iter()
            .map(|p| p.iter().map(|k| k.to_string()).collect()),
    );
    for path in paths {
        for j in &junk {
            let mut v = base.clone();
            let mut slot = &mut v;
            for k in &path {
                slot = match k.parse::<usize>() {
                    Ok(i) if slot.is_array() => &mut slot[i],
                    _ => &mut slot[k.as_str()],
                };
            }
            *slot = j.clone();
            let got = normalize(event, "d", &serde_json::to_vec(&v).unwrap());
            assert!(
                ok_or_refused_time(&got, &path),
                "{file} {path:?}={j}: {got:?}"
            );
        }
    }
}

/// For the mangled-field tests: a normalization is fine when it succeeded,
/// or refused a time outside the sane range in exactly the mangled field.
#[cfg(test)]
pub(crate) fn ok_or_refused_time(got: &Result<Normalized, WebhookError>, path: &[String]) -> bool {
    match got {
        Ok(_) => true,
        Err(WebhookError::TimeOutOfRange(e)) => path
            .last()
            .is_some_and(|last| e.field.ends_with(last.as_str())),
        Err(_) => false,
    }
}

fn ignored(reason: String) -> Normalized {
    Normalized::Ignored { reason }
}

/// What the per-event normalizers read.
struct Ctx<'a> {
    event: &'a str,
    repo: &'a str,
    /// The fields most events share, typed.
    p: &'a Payload,
    /// The whole body, for event-specific fields (each event module types its own).
    raw: RawBody<'a>,
}

/// The body as a `serde_json::Value`, parsed only if an event module asks.
struct RawBody<'a> {
    text: &'a str,
    value: std::cell::OnceCell<Value>,
}

impl<'a> RawBody<'a> {
    fn new(text: &'a str) -> RawBody<'a> {
        RawBody {
            text,
            value: std::cell::OnceCell::new(),
        }
    }

    /// The whole body; `Null` cannot happen (the text was checked to be JSON).
    fn value(&self) -> &Value {
        self.value
            .get_or_init(|| serde_json::from_str(self.text).unwrap_or(Value::Null))
    }
}

impl Ctx<'_> {
    /// The refusal of a delivery without `what` (its object: the
    /// discussion, the run, ...).
    fn lacks(&self, what: &str) -> String {
        format!("`{}` delivery carries no {what}", self.event)
    }

    /// The whole body as a `Value` (parsed on first use).
    fn raw(&self) -> &Value {
        self.raw.value()
    }

    fn action(&self) -> &str {
        self.p.action.as_deref().unwrap_or("")
    }

    /// The fact's time: the timestamp of its own action (`own`: action and
    /// field; any other action is dated by `other`), else `fallback`; refused,
    /// naming `what` and the action, when neither is a time.
    fn fact_time(
        &self,
        what: &str,
        own: &[(&str, Option<&Value>)],
        other: Option<&Value>,
        fallback: Option<&Value>,
    ) -> Result<DateTime<Utc>, String> {
        let action = self.action();
        let primary = own
            .iter()
            .find(|(a, _)| *a == action)
            .map_or(other, |o| o.1);
        payload::parse_time(primary)
            .or_else(|| payload::parse_time(fallback))
            .ok_or_else(|| format!("`{what}.{action}` has no timestamp"))
    }

    fn other(&self) -> ObservationKind {
        ObservationKind::Other {
            event: self.event.to_string(),
            action: self.action().to_string(),
        }
    }
}

/// A placeholder time: the delivery has none of the fact's own (a team's
/// membership change, a milestone's deletion), and `http::webhook` dates
/// the fact at receipt (`dated_at_receipt`).
const UNDATED: DateTime<Utc> = DateTime::<Utc>::UNIX_EPOCH;

/// A fact before it gets its delivery-derived id and the sender as actor.
struct Fact {
    at: DateTime<Utc>,
    target: String,
    kind: ObservationKind,
    snapshot: Option<ItemSnapshot>,
}

impl Fact {
    fn into_observation(self, delivery_id: &str, n: usize, p: &Payload) -> Observation {
        Observation {
            id: format!("{delivery_id}/{n}"),
            at: self.at,
            target: self.target,
            actor: p.sender.as_ref().and_then(payload::User::actor),
            event: self.kind,
            snapshot: self.snapshot,
        }
    }
}

/// The login to key a delivery by when it names no repository: the
/// organization of an organization-level event (a project's, a team
/// membership's, the organization's own), from `organization.login`.
fn owner_without_repo(event: &str, raw: &Value) -> Option<String> {
    let org_level =
        event.starts_with("projects_v2") || matches!(event, "membership" | "organization");
    if !org_level {
        return None;
    }
    raw.pointer("/organization/login")?
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// A per-event normalizer's result; `Err` is the reason to ignore the delivery.
#[derive(Default)]
struct Output {
    observations: Vec<Fact>,
    discoveries: Vec<ExecutionRecord>,
    /// `repository.renamed`/`transferred`: the repository's old name;
    /// `organization.renamed`: the owner's.
    rename: Option<Rename>,
}

/// A repository renamed or transferred (`repositories`; the payload's
/// `repository.id` says which): the full name it had, read from `field`;
/// or (`owner`) an owner renamed (`organizations`): the login it had.
struct Rename {
    from: String,
    field: &'static str,
    owner: bool,
}

impl Rename {
    /// The old name must be a name like any: an owner's login
    /// (`ident::owner`) or a repository's full name (`ident::repo`).
    fn check(&self) -> Result<(), WebhookError> {
        let valid = if self.owner {
            ident::owner(&self.from)
        } else {
            ident::repo(&self.from)
        };
        valid.map_err(WebhookError::bad_name(self.field))
    }
}

impl Output {
    /// A delivery that renames (`Rename`), with no facts of its own.
    fn renamed(from: String, field: &'static str, owner: bool) -> Output {
        Output {
            rename: Some(Rename { from, field, owner }),
            ..Output::default()
        }
    }

    /// Every key the delivery would file under (its facts' targets, its
    /// discoveries' watch keys) must pass `ident::target_key`: a delivery
    /// naming a bad repository, branch or tag stores nothing.
    fn check_keys(&self) -> Result<(), WebhookError> {
        let facts = self.observations.iter().map(|f| f.target.clone());
        let found = self.discoveries.iter().flat_map(|d| d.watch_keys());
        for key in facts.chain(found) {
            ident::target_key(&key).map_err(WebhookError::bad_name("a key it names"))?;
        }
        if let Some(rename) = &self.rename {
            rename.check()?;
        }
        Ok(())
    }

    /// One fact under one key.
    fn one(
        at: DateTime<Utc>,
        target: String,
        kind: ObservationKind,
        snapshot: Option<ItemSnapshot>,
    ) -> Output {
        let mut out = Output::default();
        out.observations.push(Fact {
            at,
            target,
            kind,
            snapshot,
        });
        out
    }

    /// One fact about thread `number` of the delivery's repository, with the
    /// thread's snapshot.
    fn on_thread(
        ctx: &Ctx,
        number: u64,
        at: DateTime<Utc>,
        kind: ObservationKind,
        snapshot: ItemSnapshot,
    ) -> Output {
        Output::one(at, thread_key(ctx.repo, number), kind, Some(snapshot))
    }

    /// The same fact (no snapshot) filed under several keys.
    fn facts(at: DateTime<Utc>, keys: Vec<String>, kind: ObservationKind) -> Output {
        let mut out = Output::default();
        for target in keys {
            out.observations.push(Fact {
                at,
                target,
                kind: kind.clone(),
                snapshot: None,
            });
        }
        out
    }
}

type NormResult = Result<Output, String>;

#[cfg(test)]
mod tests;
