//! `push` events: one `Pushed` observation filed under the branch's ref key,
//! and a `Reverted` under the reverted commit's key for each pushed commit
//! whose message says `This reverts commit <sha>` (what `git revert` and
//! GitHub's revert button write).

use super::payload::parse_time;
use super::{Ctx, Fact, NormResult, Output};
use crate::model::observation::{PushedCommit, MAX_COMMIT_PATHS};
use crate::model::target::{commit_key, ref_key};
use crate::model::ObservationKind;

pub(super) fn normalize(ctx: &Ctx) -> NormResult {
    let p = ctx.p;
    let git_ref = p.git_ref.as_deref().ok_or("`push` has no ref")?;
    // No arrival-time fallback: observations must carry GitHub's time.
    let at = parse_time(p.head_commit.as_ref().and_then(|c| c.timestamp.as_ref()))
        .or_else(|| parse_time(p.repository.as_ref()?.pushed_at.as_ref()))
        .ok_or("`push` has no timestamp")?;
    let commits: Vec<PushedCommit> = p
        .commits
        .iter()
        .flatten()
        .map(|c| {
            let paths = c.added.len() + c.modified.len() + c.removed.len();
            let keep = |v: &Vec<String>| match paths <= MAX_COMMIT_PATHS {
                true => v.clone(),
                false => Vec::new(),
            };
            PushedCommit {
                sha: c.id.clone().unwrap_or_default(),
                message: c.message.clone().unwrap_or_default(),
                added: keep(&c.added),
                modified: keep(&c.modified),
                removed: keep(&c.removed),
            }
        })
        .collect();
    // A revert lands when it reaches the default branch; GitHub's revert
    // button first pushes it to a `revert-N-…` branch for a PR that may never merge.
    let branch = git_ref.trim_start_matches("refs/heads/");
    let landed = p
        .repository
        .as_ref()
        .and_then(|r| r.default_branch.as_deref())
        .is_none_or(|d| d == branch);
    let reverts: Vec<Fact> = commits
        .iter()
        .filter(|c| !c.sha.is_empty())
        .filter_map(|c| {
            let reverted = reverted_sha(&c.message)?;
            Some(Fact {
                at,
                target: commit_key(ctx.repo, &reverted),
                kind: ObservationKind::Reverted {
                    by: c.sha.clone(),
                    reverted_sha: Some(reverted),
                    landed,
                },
                snapshot: None,
            })
        })
        .collect();
    let mut out = Output::default();
    out.observations.push(Fact {
        at,
        target: ref_key(ctx.repo, git_ref),
        kind: ObservationKind::Pushed {
            git_ref: git_ref.trim_start_matches("refs/heads/").to_string(),
            before: p.before.clone().unwrap_or_default(),
            after: p.after.clone().unwrap_or_default(),
            forced: p.forced.unwrap_or(false),
            commits,
        },
        snapshot: None,
    });
    out.observations.extend(reverts);
    Ok(out)
}

/// The events this family normalizes: `push`.
pub(super) const EVENTS: super::Events = &[("push", normalize)];

/// The sha in `This reverts commit <sha>.`, lower-cased; at least 7 hex digits.
pub(crate) fn reverted_sha(message: &str) -> Option<String> {
    const PHRASE: &str = "This reverts commit ";
    let rest = &message[message.find(PHRASE)? + PHRASE.len()..];
    let sha: String = rest.chars().take_while(|c| c.is_ascii_hexdigit()).collect();
    (sha.len() >= 7 && sha.len() <= 64).then(|| sha.to_ascii_lowercase())
}
