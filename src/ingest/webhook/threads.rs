//! `issues` and `pull_request` events: one observation on the thread, with
//! the item's state as the snapshot, and a discovery for a gh-aw `opened`.
//! A merged revert PR (GitHub's revert button) also yields a `Reverted` on
//! the thread of the PR it reverts.

use chrono::{DateTime, Utc};

use super::payload::Item;
use super::{discovery, Ctx, Fact, NormResult, Output};
use crate::model::actions::{thread_action, ActionFacts};
use crate::model::observation::body_hash;
use crate::model::target::thread_key;
use crate::model::ObservationKind;

pub(super) fn normalize(ctx: &Ctx) -> NormResult {
    let is_pr_event = ctx.event == "pull_request";
    let item = if is_pr_event {
        ctx.p.pull_request.as_ref()
    } else {
        ctx.p.issue.as_ref()
    };
    let item = item.ok_or_else(|| ctx.lacks("item"))?;
    let number = item
        .number
        .ok_or_else(|| format!("`{}` item has no number", ctx.event))?;
    let action = ctx.action();
    // The fact's own time: creation for opened, closing for closed.
    let own = [
        ("opened", item.created_at.as_ref()),
        ("closed", item.closed_at.as_ref()),
    ];
    let updated = item.updated_at.as_ref();
    let at = ctx.fact_time(ctx.event, &own, updated, updated)?;
    let is_pr = item.is_pr(is_pr_event);

    let mut out = Output::default();
    out.observations.push(Fact {
        at,
        target: thread_key(ctx.repo, number),
        kind: kind_of(ctx, item).unwrap_or_else(|| ctx.other()),
        snapshot: Some(item.snapshot(is_pr)),
    });
    if let Some(fact) = revert_of_pr(ctx, item, number, at) {
        out.observations.push(fact);
    }
    out.observations
        .extend(mentions(ctx, item, number, is_pr, at));
    if action == "opened" {
        out.discoveries
            .extend(discovery::for_item(ctx, item, number, is_pr, at));
    }
    Ok(out)
}

/// The events this family normalizes: `issues` and `pull_request`.
pub(super) const EVENTS: super::Events = &[("issues", normalize), ("pull_request", normalize)];

/// A merged `Revert "…"` PR: `Reverted` filed under the thread it reverts,
/// named by the body's `Reverts owner/repo#N` (the revert button's body) or
/// else its first `#N`. Other repositories' PRs are not ours to file.
fn revert_of_pr(ctx: &Ctx, item: &Item, number: u64, at: DateTime<Utc>) -> Option<Fact> {
    let merged = item.merged == Some(true) || item.merged_at.as_ref().is_some_and(|v| !v.is_null());
    if ctx.event != "pull_request" || ctx.action() != "closed" || !merged {
        return None;
    }
    if !item.title.as_deref()?.starts_with("Revert \"") {
        return None;
    }
    let reverted = reverted_pr(item.body.as_deref()?, ctx.repo)?;
    (reverted != number).then(|| Fact {
        at,
        target: thread_key(ctx.repo, reverted),
        kind: ObservationKind::Reverted {
            by: format!("#{number}"),
            reverted_sha: None,
            landed: true,
        },
        snapshot: None,
    })
}

/// Most mentions of one body filed as cross-references.
const MENTIONS: usize = 16;

/// An issue or PR opened with `#N` in its body: GitHub puts a
/// `cross-referenced` entry on N's timeline, by the opening item's author,
/// at its opening, which the API path reads (`reconcile::map`). The webhook
/// path files the same fact from the `opened` delivery, so both paths see a
/// mention alike (a revert PR opened before the PR it reverts is merged, an
/// agent's PR naming its issue). Same repository only; at most `MENTIONS`.
fn mentions(ctx: &Ctx, item: &Item, number: u64, is_pr: bool, at: DateTime<Utc>) -> Vec<Fact> {
    if ctx.action() != "opened" {
        return Vec::new();
    }
    let Some(body) = item.body.as_deref() else {
        return Vec::new();
    };
    mentioned(body, ctx.repo)
        .into_iter()
        .filter(|n| *n != number)
        .take(MENTIONS)
        .map(|n| Fact {
            at,
            target: thread_key(ctx.repo, n),
            kind: ObservationKind::CrossReferenced {
                source_number: number,
                source_is_pull_request: is_pr,
            },
            snapshot: None,
        })
        .collect()
}

/// The numbers a body mentions, in order, once each: `#N` standing alone,
/// or `owner/repo#N` naming `repo`.
pub(crate) fn mentioned(body: &str, repo: &str) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    for (i, _) in body.match_indices('#') {
        let digits: String = body[i + 1..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        let Ok(n) = digits.parse::<u64>() else {
            continue;
        };
        let before = &body[..i];
        let ours = match before.chars().next_back() {
            None => true,
            Some(c) if c.is_whitespace() || "([{,;:".contains(c) => true,
            Some(c) if c.is_alphanumeric() || "-_.".contains(c) => {
                let start = before
                    .rfind(|c: char| c.is_whitespace() || "([{,;:".contains(c))
                    .map_or(0, |j| j + 1);
                before[start..].eq_ignore_ascii_case(repo)
            }
            Some(_) => false,
        };
        if ours && !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// The PR number a revert PR's body names: `Reverts owner/repo#N` when the
/// repo is ours, else the first number it mentions (`mentioned`).
pub(crate) fn reverted_pr(body: &str, repo: &str) -> Option<u64> {
    let number = |s: &str| -> Option<u64> {
        let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    };
    for line in body.lines() {
        if let Some(rest) = line.trim().strip_prefix("Reverts ") {
            let (named_repo, n) = rest.trim().split_once('#')?;
            let named_repo = named_repo.trim();
            if named_repo.is_empty() || named_repo.eq_ignore_ascii_case(repo) {
                return number(n);
            }
            return None;
        }
    }
    mentioned(body, repo).into_iter().next()
}

/// The observation kind; `None` (→ `Other`) for unknown actions or when the
/// payload lacks what the action needs.
fn kind_of(ctx: &Ctx, item: &Item) -> Option<ObservationKind> {
    use ObservationKind as K;
    let p = ctx.p;
    let login = |u: &Option<super::payload::User>| u.as_ref().and_then(|u| u.login.clone());
    let action = ctx.action();
    let milestone = match action {
        // `milestoned` may name it only on the item.
        "milestoned" => p.milestone.as_ref().or(item.milestone()),
        _ => p.milestone.as_ref(),
    };
    let facts = ActionFacts {
        label: p.label.as_ref().and_then(|l| l.name.clone()),
        assignee: login(&p.assignee),
        milestone: milestone.and_then(|m| m.title.clone()),
        reviewer: login(&p.requested_reviewer),
        team: p.requested_team.as_ref().and_then(|t| t.slug.clone()),
    };
    if let Some(kind) = thread_action(action, &facts) {
        return kind;
    }
    Some(match action {
        "opened" => K::Opened,
        "edited" => {
            let changes = p.changes.as_ref();
            let from = |f: Option<&super::payload::From>| f.and_then(|f| f.from.clone());
            K::Edited {
                title_from: from(changes.and_then(|c| c.title.as_ref())),
                body_hash_from: from(changes.and_then(|c| c.body.as_ref())).map(|b| body_hash(&b)),
                base_from: from(
                    changes
                        .and_then(|c| c.base.as_ref())
                        .and_then(|b| b.git_ref.as_ref()),
                ),
            }
        }
        // The top-level `type` is the type set or removed; `issue.type` is
        // already cleared on `untyped`.
        "typed" => K::IssueTyped {
            issue_type: type_name(ctx.raw().get("type"))
                .or_else(|| type_name(item.issue_type.as_ref()))?,
        },
        "untyped" => K::IssueUntyped {
            issue_type: type_name(ctx.raw().get("type"))?,
        },
        "deleted" => K::Deleted,
        "synchronize" => K::Synchronize {
            before: p.before.clone()?,
            after: p.after.clone()?,
        },
        _ => return None,
    })
}

/// An issue type's name: `{"name": "Bug", ...}` or a plain string.
fn type_name(v: Option<&serde_json::Value>) -> Option<String> {
    match v? {
        serde_json::Value::String(s) => Some(s.clone()),
        other => other.get("name")?.as_str().map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use crate::ingest::webhook::{normalize, Normalized};
    use crate::model::ObservationKind as K;

    fn event(body: &str) -> K {
        match normalize("issues", "d", body.as_bytes()).unwrap() {
            Normalized::Relevant(d) => d.observations[0].event.clone(),
            Normalized::Ignored { reason } => panic!("{reason}"),
        }
    }

    #[test]
    fn typed_and_untyped_name_the_issue_type() {
        let repo = r#""repository":{"full_name":"o/r"},"sender":{"login":"alice"}"#;
        let typed = format!(
            r#"{{"action":"typed","issue":{{"number":3,"updated_at":"2026-01-01T00:00:00Z","type":{{"name":"Bug"}}}},"type":{{"id":1,"name":"Bug"}},{repo}}}"#
        );
        assert_eq!(
            event(&typed),
            K::IssueTyped {
                issue_type: "Bug".into()
            }
        );
        let untyped = format!(
            r#"{{"action":"untyped","issue":{{"number":3,"updated_at":"2026-01-01T00:00:00Z","type":null}},"type":{{"id":1,"name":"Bug"}},{repo}}}"#
        );
        assert_eq!(
            event(&untyped),
            K::IssueUntyped {
                issue_type: "Bug".into()
            }
        );
        let bare = r#"{"action":"untyped","issue":{"number":3,"updated_at":"2026-01-01T00:00:00Z"},"repository":{"full_name":"o/r"}}"#;
        assert!(matches!(event(bare), K::Other { .. }));
    }
}
