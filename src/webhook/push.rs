//! `push` events: one `Pushed` observation filed under the branch's ref key.

use super::payload::parse_time;
use super::{Ctx, Fact, NormResult, Output};
use crate::model::observation::PushedCommit;
use crate::model::target::ref_key;
use crate::model::ObservationKind;

pub(super) fn normalize(ctx: &Ctx) -> NormResult {
    let p = ctx.p;
    let git_ref = p.git_ref.as_deref().ok_or("`push` has no ref")?;
    // No arrival-time fallback: observations must carry GitHub's time.
    let at = parse_time(p.head_commit.as_ref().and_then(|c| c.timestamp.as_ref()))
        .or_else(|| parse_time(p.repository.as_ref()?.pushed_at.as_ref()))
        .ok_or("`push` has no timestamp")?;
    let commits = p
        .commits
        .iter()
        .flatten()
        .map(|c| PushedCommit {
            sha: c.id.clone().unwrap_or_default(),
            message: c.message.clone().unwrap_or_default(),
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
    Ok(out)
}
