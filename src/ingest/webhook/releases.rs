//! `release` events: a `ReleaseChanged` filed under the release's tag, plus,
//! for `edited`, an `Edited` carrying the previous name and body hash from
//! `changes` (what an `update_release` evaluator needs to tell a revert of
//! the agent's edit from a later unrelated edit, independent of time).
//!
//! Releases have no `updated_at`. Creation and publication use their own
//! times; `edited`, `deleted` and `unpublished` use the latest time the
//! payload carries (`published_at`, `created_at`, assets' `updated_at`). That
//! time can be earlier than the edit itself, so evaluators must not rely on
//! the order of such observations relative to execution.

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::Value;

use super::payload::{parse_time, From};
use super::{Ctx, Fact, NormResult, Output};
use crate::model::observation::body_hash;
use crate::model::target::object_key;
use crate::model::{ObservationKind, TargetKind};

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Body {
    release: Option<Release>,
    changes: Option<Changes>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Release {
    id: Option<u64>,
    tag_name: Option<String>,
    name: Option<String>,
    body: Option<String>,
    draft: Option<bool>,
    prerelease: Option<bool>,
    created_at: Option<Value>,
    published_at: Option<Value>,
    assets: Option<Vec<Asset>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Asset {
    updated_at: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Changes {
    name: Option<From>,
    body: Option<From>,
    tag_name: Option<From>,
}

const ACTIONS: &[&str] = &[
    "published",
    "created",
    "edited",
    "deleted",
    "prereleased",
    "released",
    "unpublished",
];

pub(super) fn normalize(ctx: &Ctx) -> NormResult {
    let body: Body = super::payload::shaped(ctx)?;
    let release = body.release.ok_or_else(|| ctx.lacks("release"))?;
    let tag = release
        .tag_name
        .clone()
        .filter(|t| !t.is_empty())
        .ok_or("`release` has no tag")?;
    let action = ctx.action();
    let at = time_of(action, &release).ok_or("`release` has no timestamp")?;
    let kind = if ACTIONS.contains(&action) {
        ObservationKind::ReleaseChanged {
            release_id: release.id.unwrap_or(0),
            tag: tag.clone(),
            action: action.to_string(),
            draft: release.draft.unwrap_or(false),
            prerelease: release.prerelease.unwrap_or(false),
            name: release.name.clone(),
            body_hash: body_hash(release.body.as_deref().unwrap_or("")),
        }
    } else {
        ctx.other()
    };
    let changes = body.changes.unwrap_or_default();
    let from = |f: Option<From>| f.and_then(|f| f.from);
    let mut keys = vec![object_key(ctx.repo, TargetKind::Release, &tag)];
    // A renamed tag: outputs aimed at the old tag must still see this.
    if let Some(old) = from(changes.tag_name).filter(|t| !t.is_empty() && *t != tag) {
        keys.push(object_key(ctx.repo, TargetKind::Release, &old));
    }
    let edited = (action == "edited").then(|| ObservationKind::Edited {
        title_from: from(changes.name),
        body_hash_from: from(changes.body).map(|b| body_hash(&b)),
        base_from: None,
    });
    let mut out = Output::default();
    for target in keys {
        for kind in std::iter::once(&kind).chain(edited.as_ref()) {
            out.observations.push(Fact {
                at,
                target: target.clone(),
                kind: kind.clone(),
                snapshot: None,
            });
        }
    }
    Ok(out)
}

/// The events this family normalizes: `release`.
pub(super) const EVENTS: super::Events = &[("release", normalize)];

/// GitHub's time for the action (see the module doc for `edited`/`deleted`).
fn time_of(action: &str, r: &Release) -> Option<DateTime<Utc>> {
    let created = parse_time(r.created_at.as_ref());
    let published = parse_time(r.published_at.as_ref());
    match action {
        "created" => created.or(published),
        "published" | "released" | "prereleased" => published.or(created),
        _ => {
            let assets = r
                .assets
                .iter()
                .flatten()
                .filter_map(|a| parse_time(a.updated_at.as_ref()));
            [created, published]
                .into_iter()
                .flatten()
                .chain(assets)
                .max()
        }
    }
}
