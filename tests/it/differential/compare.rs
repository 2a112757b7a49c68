//! Comparing the paths' verdicts window by window, and the differences a
//! rule states (`EXCEPTIONS`): each names why one path cannot know what
//! another does.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use safe_outcomes::bench::github_model::generate::Generated;
use safe_outcomes::bench::github_model::history::{
    CheckAct, DiscussionAct, Event, Fact, ProjectAct, ReactionOn,
};
use safe_outcomes::model::{EvidenceStrength, OutcomeStatus};
use serde_json::Value;

use super::paths::{Ended, Path};

type Verdict = (OutcomeStatus, EvidenceStrength, String);

/// One window of one output judged differently by two paths.
#[derive(Debug, Clone)]
pub struct Difference {
    /// What the paths' records say in words, for an unknown.
    pub notes: String,
    pub id: String,
    pub output_type: String,
    pub window: String,
    pub left: (Path, Option<Verdict>),
    pub right: (Path, Option<Verdict>),
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |v: &Option<Verdict>| match v {
            Some((s, g, sig)) => format!("{s:?}/{g:?}/{sig}"),
            None => "untracked".into(),
        };
        write!(
            f,
            "{} {} @{}: {} {} vs {} {}",
            self.output_type,
            self.id,
            self.window,
            self.left.0.name(),
            show(&self.left.1),
            self.right.0.name(),
            show(&self.right.1)
        )?;
        if !self.notes.is_empty() {
            write!(f, "\n    notes: {}", self.notes)?;
        }
        Ok(())
    }
}

/// A difference a rule states: which paths may differ, for which outputs, why.
pub struct Exception {
    /// The paths that cannot know.
    paths: &'static [Path],
    pub why: &'static str,
    applies: fn(&[&Event]) -> bool,
}

/// The stated differences. Every one is a fact GitHub sends no webhook for,
/// so the webhook-only path cannot see it; the paths that read the API
/// (backfill, reconcile, the signal fetcher) must agree.
pub const EXCEPTIONS: &[Exception] = &[
    Exception {
        paths: &[Path::Backfill, Path::Reconcile],
        why: "a deleted repository's past (its owner's deleted with it) is gone from the API: every REST path of it answers 404 and GraphQL's `repository` NOT_FOUND, the installation no longer lists it nor its runs, so a read after the deletion finds nothing of it (not even who deleted it, nor when); only the webhooks told what happened before, and `repository.deleted` who deleted it",
        applies: |events| {
            events
                .iter()
                .any(|e| matches!(e.fact, Fact::DeleteRepo | Fact::DeleteOwner))
        },
    },
    Exception {
        paths: &[Path::Webhooks],
        why: "reactions send no webhook (github::signals reads them)",
        applies: |events| events.iter().any(|e| matches!(e.fact, Fact::React { .. })),
    },
    Exception {
        paths: &[Path::Backfill, Path::Reconcile],
        why: "who edited a release is told only by its webhook (the API's release names its author, not its editors): a person's replacement is state_replaced from the webhooks, an edit by the release's author from the API",
        applies: |events| {
            events
                .iter()
                .any(|e| matches!(e.fact, Fact::EditRelease { .. }))
        },
    },
    Exception {
        paths: &[Path::Backfill, Path::Reconcile],
        why: "a review thread's resolutions are dated only by their webhooks (GraphQL gives isResolved and resolvedBy now, neither when nor the earlier resolutions and unresolutions)",
        applies: |events| {
            events
                .iter()
                .any(|e| matches!(e.fact, Fact::ResolveThread { .. }))
        },
    },
    Exception {
        paths: &[Path::Backfill, Path::Reconcile],
        why: "a discussion's past states are told only by its webhooks and by the reads at its checkpoints: GitHub has no discussion timeline (GraphQL nor REST), so it answers neither who closed or reopened it, nor when it was closed once reopened, nor an edit undone later, nor an answer replaced or withdrawn later (GraphQL's `answer` is the current one; found when the exception was narrowed, 2026-12-06: a person's answer at T+54m replaced by the agent's at T+5h read as a reply at 1h); a read after the fact sees the discussion as it is now",
        applies: on_a_discussion,
    },
    Exception {
        paths: &[Path::Backfill, Path::Reconcile],
        why: "a deleted discussion or discussion comment is gone from the API (GraphQL answers the discussion null, or lists the comments left): who deleted it, when, and what the comment was are told only by its webhook",
        applies: discussion_deleted,
    },
    Exception {
        paths: &[Path::Backfill, Path::Reconcile],
        why: "a transferred discussion leaves the repository: GraphQL's `repository.discussion(number)` resolves a number in that repository only (no redirect, unlike REST's 301 for a transferred issue), so a read finds it gone as if deleted; only the `discussion.transferred` webhook says it moved, and where (its node id would find it in its new repository, but the output's record names the number only)",
        applies: |events| {
            events.iter().any(|e| {
                matches!(
                    &e.fact,
                    Fact::DiscussionAct {
                        act: DiscussionAct::Transfer { .. },
                        ..
                    }
                )
            })
        },
    },
    Exception {
        paths: &[Path::Backfill, Path::Reconcile],
        why: "a deleted comment's past is gone from the API (its 404 says deleted, not when nor what came before, nor who deleted it): an issue comment or a review comment alike",
        applies: |events| {
            events.iter().any(|e| {
                matches!(
                    e.fact,
                    Fact::DeleteComment { .. } | Fact::DeleteReviewComment { .. }
                )
            })
        },
    },
    Exception {
        paths: &[Path::Backfill, Path::Reconcile],
        why: "a push a later force push dropped is gone from the API (`pulls/N/commits` and the timeline list the commits the PR holds now; the `head_ref_force_pushed` entry names who forced, not what it dropped): only the `push` webhook told who pushed it and when (found on random seeds, 2026-12-06, once people's labels and milestones on PRs were generated)",
        applies: dropped_push,
    },
    Exception {
        paths: &[Path::Backfill],
        why: "a day-one backfill installed after a rename meets the repository by its new name only: a manifest line whose URL names the old name (written before the rename) names a repository the installation does not list, and is refused by the tenancy rule (following the old name's 301 at harvest is not built)",
        applies: |events| {
            events.iter().any(|e| e.fact.renamed_to().is_some())
        },
    },
    Exception {
        paths: &[Path::Backfill, Path::Reconcile],
        why: "a deleted issue's past is gone from the API: REST answers its paths (the issue, its timeline, its comments) `410 Gone`, naming neither who deleted it nor when, nor anything done to it before; only `issues.deleted` tells who (a person's deletion of an issue the agent wrote is rejected/strong from the webhook, unknown from the API)",
        applies: |events| {
            events
                .iter()
                .any(|e| matches!(e.fact, Fact::DeleteIssue { .. }))
        },
    },
    Exception {
        paths: &[Path::Backfill, Path::Reconcile],
        why: "a deleted or unpublished release's past is gone from the API: `releases/tags/{tag}` answers 404 for both (GitHub finds only a published release by its tag), which says gone, not by whom nor when; only the `release.deleted`/`unpublished` webhook names who withdrew it",
        applies: |events| {
            events.iter().any(|e| {
                matches!(
                    e.fact,
                    Fact::DeleteRelease { .. } | Fact::UnpublishRelease { .. }
                )
            })
        },
    },
    Exception {
        paths: &[Path::Backfill, Path::Reconcile],
        why: "a code scanning alert's earlier states are gone from the API once it is open again: `code-scanning/alerts/{n}` is the alert now (open, its `fixed_at` or `dismissed_by`/`dismissed_at` cleared, dated at its reopening), and GitHub keeps no history of an alert's states (REST nor GraphQL): only its webhooks told it was fixed or dismissed before",
        applies: |events| {
            events
                .iter()
                .any(|e| matches!(e.fact, Fact::Check(CheckAct::ReopenAlert { .. })))
        },
    },
    Exception {
        paths: &[Path::Webhooks, Path::WebhooksWithSignals],
        why: "minimizing a comment sends no webhook, and no signal read covers it: only an output judged from the API sees it",
        applies: |events| {
            events
                .iter()
                .any(|e| matches!(e.fact, Fact::MinimizeComment { .. }))
        },
    },
    Exception {
        paths: &[Path::Backfill, Path::Reconcile],
        why: "a deleted project is told only by `projects_v2.deleted`, which names who deleted it and when: GitHub's GraphQL answers a deleted project NOT_FOUND, naming neither, so no read after the fact can give a person's deletion (rejected/strong `deleted` of create_project) or its time: the API path's read of create_project's project (`graphql/project/{n}`) finds it gone at the read, by nobody named; and the App reads no project for create_project_status_update (`judge::reads` PROJECTS)",
        applies: |events| {
            events
                .iter()
                .any(|e| matches!(e.fact, Fact::Project(ProjectAct::Delete { .. })))
        },
    },
    Exception {
        paths: &[Path::Backfill, Path::Reconcile],
        why: "who closed a project, and its closes undone since, are told only by `projects_v2.closed`/`reopened`: GitHub's GraphQL `ProjectV2` (and REST's `projects-v2`) gives `closed`/`closedAt` now and its `creator`, no closer and no past closes, so a read after the fact finds a close by an unknown actor (unknown/weak `close_actor_unknown` of create_project, where the webhooks name a person's close, rejected/strong `project_closed`, or a bot's, ignored/weak `lifecycle`), or, once reopened, no close at all (where the webhooks' windows during the close saw it)",
        applies: |events| {
            events
                .iter()
                .any(|e| matches!(e.fact, Fact::Project(ProjectAct::Close { .. })))
        },
    },
    Exception {
        paths: &[Path::Backfill, Path::Reconcile],
        why: "a milestone's deletion is told only by `milestone.deleted`, which names who deleted it and is received when it happens: GitHub answers the deleted milestone's own path 404 (naming neither who nor when), and the items it held keep no trace of it (no timeline entry, no delivery of theirs, their `updated_at` unmoved), so a read after the fact finds the milestone gone at the read, by nobody named (rejected/weak `milestone_removed`, hedged: general rule 15), and the windows before the read see the item as its `milestoned` entry left it (`ingest::reconcile::map::milestones`; tests/it/differential/milestones.rs)",
        applies: |events| {
            events
                .iter()
                .any(|e| matches!(e.fact, Fact::DeleteMilestone { .. }))
        },
    },
    Exception {
        paths: &[Path::Webhooks],
        why: "a requested team's membership is in no webhook unless it changes (`membership.added`/`removed`): whether a person who reviewed or commented, and was a member of the team at some time, was one at their act is known to the webhook-only path only from such a change; a member from before, or one whose change came after the window, is known only from the memberships endpoint, which the signal fetcher and the API paths read (issue 44 item 4)",
        applies: team_act,
    },
    Exception {
        paths: &[Path::Backfill, Path::Reconcile],
        why: "a requested team's membership history is told only by `membership.added`/`removed`: GitHub's memberships endpoint answers membership now (and 404 for a non-member, as for a team the App cannot see), so a read after the fact cannot tell that a reviewer joined after their review, or left after it, or left before it (issue 44 item 4: a team member's act counts only while they are a member)",
        applies: team_act_by_a_changed_member,
    },
];

/// The verdict of each window. "Nothing seen" is one verdict whatever the
/// evaluator calls what it did not see (`target_unobserved`,
/// `project_item_unobserved`, ...): unknown, no evidence.
/// Differences the property found and that are not fixed yet: not rules,
/// gaps, each named by the class it showed (issue 21, item 3, owned by the
/// rules). Skipped by default so that CI guards every other class;
/// `SAFE_OUTCOMES_DIFFERENTIAL_STRICT=1` counts them too (to work on them:
/// a failing case replays with `SAFE_OUTCOMES_DIFFERENTIAL_BYTES`).
pub const KNOWN_GAPS: &[(&str, &str)] = &[];

/// True when someone's push to a PR (not the agent's own, whose drop both
/// paths judge alike: `commit_dropped`) was later dropped by a force push:
/// the API no longer lists the dropped commit, nor who pushed it.
fn dropped_push(events: &[&Event]) -> bool {
    let agent = safe_outcomes::bench::github_model::history::Actor::actions();
    events.iter().any(|p| {
        let Fact::Push { number, .. } = &p.fact else {
            return false;
        };
        if p.actor == agent {
            return false;
        }
        events.iter().any(|f| {
            matches!(&f.fact, Fact::ForcePush { number: m, .. } if m == number) && f.at > p.at
        })
    })
}

/// True when the output's history holds a change to a discussion whose
/// past the API cannot tell (no discussion timeline, no history of its
/// edits): a close or a reopen, or an edit or a label change by anyone but
/// the agent, or an answer replaced or withdrawn; or, on a discussion a
/// person opened (an update's or a close's target, whose verdict reads the
/// discussion's state), any change after the agent's write
/// (`state_moved_later`). A discussion the agent opened and others only
/// commented, answered once (GraphQL dates the answer and names its
/// chooser), reacted to, locked, pinned or moved to another category is
/// compared, and so is one a person opened that only the agent changed.
fn on_a_discussion(events: &[&Event]) -> bool {
    let agent = safe_outcomes::bench::github_model::history::Actor::actions();
    let answers = events
        .iter()
        .filter(|e| matches!(e.fact, Fact::AnswerDiscussion { .. }))
        .count();
    answers > 1
        || state_moved_later(events, &agent)
        || events.iter().any(|e| match &e.fact {
            Fact::CloseDiscussion { .. } | Fact::ReopenDiscussion { .. } => true,
            Fact::DiscussionAct {
                act: DiscussionAct::Unanswer,
                ..
            } => true,
            Fact::DiscussionAct {
                act: DiscussionAct::Edit { .. } | DiscussionAct::Label { .. },
                ..
            } => e.actor != agent,
            _ => false,
        })
}

/// True when a person opened the discussion and it changed after the
/// agent's write (a comment, an answer, any `DiscussionAct`): GraphQL dates
/// the discussion's state by its `updatedAt` only, which the later change
/// moved past the windows before it, so a read after the fact has no state
/// for them (found when the exception was narrowed, 2026-12-06: an
/// update_discussion pinned at T+51m, unpinned at T+36h, pinned and
/// unpinned again at T+25d, unobserved by the API paths until 30d).
fn state_moved_later(
    events: &[&Event],
    agent: &safe_outcomes::bench::github_model::history::Actor,
) -> bool {
    let by_person =
        |e: &&&Event| matches!(e.fact, Fact::OpenDiscussion { .. }) && e.actor != *agent;
    let Some(written) = events
        .iter()
        .filter(|e| e.actor == *agent)
        .find(|e| {
            matches!(
                e.fact,
                Fact::DiscussionAct { .. } | Fact::CloseDiscussion { .. }
            )
        })
        .map(|e| e.at)
    else {
        return false;
    };
    events.iter().any(|e| by_person(&e))
        && events.iter().any(|e| {
            e.at > written
                && matches!(
                    e.fact,
                    Fact::DiscussionComment { .. }
                        | Fact::AnswerDiscussion { .. }
                        | Fact::CloseDiscussion { .. }
                        | Fact::ReopenDiscussion { .. }
                        | Fact::DiscussionAct { .. }
                )
        })
}

/// True when a discussion, or a comment on one, was deleted: GitHub keeps
/// no trace of a deletion (GraphQL answers the discussion `null`, or lists
/// the comments left), so who deleted it, and when, and what the comment
/// was, are told only by the webhook.
fn discussion_deleted(events: &[&Event]) -> bool {
    events.iter().any(|e| {
        matches!(
            &e.fact,
            Fact::DiscussionAct {
                act: DiscussionAct::Delete | DiscussionAct::DeleteComment { .. },
                ..
            }
        )
    })
}

// Closed (2026-11-26), no longer gaps but stated differences (`EXCEPTIONS`,
// by the fact a history holds, no longer by output type, so every type is
// compared on every history without such a fact): the discussions' states
// (create_discussion, close_discussion, update_discussion), the release
// editors (update_release: the exception now covers an edit by anyone, the
// API naming no editor), the review threads' resolutions
// (create_pull_request_review_comment, resolve_pull_request_review_thread,
// reply_to_pull_request_review_comment).
//
// Closed (2026-11-26), no longer a gap: add_comment and comment_memory
// (and create_issue, found by random seeds) differed because the API path
// dated a reaction rollup (`reactions.total_count`, no dates) at the
// comment's or issue's creation, by an unknown actor: accepted/weak from
// T+1h (pending past 7d for an issue) where the dated reactor list the
// signal fetcher reads showed the reaction hours or days later, or a bot's.
// The rule (`ingest::reconcile::map`, `rollup`): an undated count is proven
// at the read, never earlier; the list read with it dates each reaction.
// A reaction given after the fetcher's 7d read was seen only by a read
// after the fact (30d window accepted or pending there, ignored in real
// time): the types read at 7d are read again at 30d
// (`github::signals::reading_checkpoints`). Under STRICT, 2026-11-26: the
// CI seed; add_comment and comment_memory over 200 random histories
// (`SAFE_OUTCOMES_DIFFERENTIAL_TYPES=add_comment,comment_memory`, two runs
// of 100), create_issue with them over 100; two more runs of create_issue
// met the close-reason class below.
//
// Two more finds of random seeds, closed by the past states rebuilt from
// the timeline (`ingest::reconcile::past`): `create_issue` closed
// `completed` by a person at T+56m and reopened by a bot at T+3d (the 1h and
// 24h windows read the close's reason from the timeline now, as the
// webhook's `issues.closed` carried it), and `add_reviewer` whose PR closed
// at T+1h01m before the reviewer's review at T+25d (the current, empty
// request list is no longer dated at the close). Under STRICT, 2026-11-26,
// after both merges: 100 random histories with only the eleven types of the
// two closed classes compared (SAFE_OUTCOMES_DIFFERENTIAL_TYPES), none
// differing.

// A find of random seeds, closed (2026-11-26): `create_pull_request` at
// 24h and 7d, where the webhooks found the PR awaiting review and the API a
// person's activity (open/medium): a revert PR opened by a person before
// the PR was merged mentions it (`Reverts #n`), which GitHub's timeline
// tells as `cross-referenced` and no webhook on the PR does. The rule
// (`ingest::webhook::threads`, `mentions`): an item opened with `#N` in its
// body files the same cross-reference under N from its `opened` delivery.
// After it, with `KNOWN_GAPS` empty and every type compared: the CI seed,
// and 200 random histories (two runs of 100), none differing.
//
// The API's past states of an issue or PR are rebuilt from its timeline
// (`ingest::reconcile::past`), so the types judged from them agree with the
// webhooks window by window. One case stays unknown by that rule and is not
// met by these histories (the model edits no body after an update): a window
// before the item's `updated_at` sees no body, since REST dates no body edit
// (GraphQL's `lastEditedAt`/`userContentEdits` date them, with a summary
// `diff` only, and are not read), where the webhooks saw the body.
fn known_gap(output_type: &str) -> bool {
    (std::env::var("SAFE_OUTCOMES_DIFFERENTIAL_STRICT").is_err()
        && KNOWN_GAPS.iter().any(|(t, _)| *t == output_type))
        || !compared(output_type)
}

/// `SAFE_OUTCOMES_DIFFERENTIAL_TYPES=add_comment,create_issue`: compare
/// those types only (to measure one class over many histories while others
/// still differ); unset, every type.
fn compared(output_type: &str) -> bool {
    std::env::var("SAFE_OUTCOMES_DIFFERENTIAL_TYPES").map_or(true, |only| {
        only.split(',').any(|t| t.trim() == output_type)
    })
}

pub fn windows(o: &safe_outcomes::model::OutcomeRecord) -> BTreeMap<String, Verdict> {
    o.windows
        .iter()
        .map(|(w, s)| {
            let unseen = s.outcome_status == OutcomeStatus::Unknown
                && s.human_check_signal.ends_with("_unobserved");
            let signal = if unseen {
                "unobserved".to_string()
            } else {
                s.human_check_signal.clone()
            };
            (
                w.to_string(),
                (s.outcome_status, s.evidence_strength, signal),
            )
        })
        .collect()
}

/// Every difference between the paths' verdicts that no rule states: each
/// pair of paths, window by window.
pub fn differences(g: &Generated, ended: &[(Path, Ended)]) -> Vec<Difference> {
    let ended = under_first_name(g, ended);
    let ended = ended.as_slice();
    let ids: BTreeSet<&String> = ended.iter().flat_map(|(_, e)| e.outcomes.keys()).collect();
    let mut out = Vec::new();
    for id in ids {
        let events = events_of(g, id);
        let excused = |p: &Path| {
            EXCEPTIONS
                .iter()
                .any(|x| x.paths.contains(p) && (x.applies)(&events))
        };
        let output_type = ended
            .iter()
            .find_map(|(_, e)| e.outcomes.get(id))
            .map(|o| o.safe_output_type.clone())
            .unwrap_or_default();
        if known_gap(&output_type) {
            continue;
        }
        for (i, (lp, le)) in ended.iter().enumerate() {
            for (rp, re) in ended.iter().skip(i + 1) {
                if excused(lp) || excused(rp) {
                    continue;
                }
                let (lw, rw) = (
                    le.outcomes.get(id).map(windows),
                    re.outcomes.get(id).map(windows),
                );
                let names: BTreeSet<&String> =
                    lw.iter().chain(rw.iter()).flat_map(|w| w.keys()).collect();
                for w in names {
                    let l = lw.as_ref().and_then(|m| m.get(w)).cloned();
                    let r = rw.as_ref().and_then(|m| m.get(w)).cloned();
                    if l != r {
                        let notes = [le, re]
                            .iter()
                            .filter_map(|e| e.outcomes.get(id))
                            .filter(|o| o.outcome_status == OutcomeStatus::Unknown)
                            .map(|o| o.notes.clone())
                            .collect::<Vec<_>>()
                            .join(" | ");
                        out.push(Difference {
                            notes,
                            id: id.clone(),
                            output_type: output_type.clone(),
                            window: w.clone(),
                            left: (*lp, l),
                            right: (*rp, r),
                        });
                    }
                }
            }
        }
    }
    out
}

/// Each path's outcomes by output id under the repository's first name:
/// a path that met the repository after a rename only (a day-one backfill
/// installed later) keys its outputs by the name it met (`o/new:run:i`),
/// the others by the name the outputs were written under (`o/old:run:i`),
/// for the same outputs.
fn under_first_name(g: &Generated, ended: &[(Path, Ended)]) -> Vec<(Path, Ended)> {
    let names = g.history.names_at(super::paths::end(g));
    let first = &g.history.repo;
    let rekey = |id: &String| {
        for name in &names {
            let prefix = id.get(..name.len());
            if prefix.is_some_and(|p| p.eq_ignore_ascii_case(name))
                && id[name.len()..].starts_with(':')
            {
                return format!("{first}{}", &id[name.len()..]);
            }
        }
        id.clone()
    };
    ended
        .iter()
        .map(|(p, e)| {
            let outcomes = e
                .outcomes
                .iter()
                .map(|(id, o)| (rekey(id), o.clone()))
                .collect();
            (
                *p,
                Ended {
                    outcomes,
                    check_runs: Vec::new(),
                },
            )
        })
        .collect()
}

/// The numbers and ids an output's manifest line names.
fn named(line: &Value) -> BTreeSet<u64> {
    let mut out = BTreeSet::new();
    for k in [
        "number",
        "parent_issue_number",
        "sub_issue_number",
        "discussion_number",
        "comment_id",
        "id",
        "review_id",
        "run_id",
        "alert_number",
        "check_run_id",
        "pull_request_number",
    ] {
        if let Some(n) = line.get(k).and_then(Value::as_u64) {
            out.insert(n);
        }
    }
    if let Some(url) = line.get("url").and_then(Value::as_str) {
        for part in url.split(['/', '#', '-', '_', 'r']) {
            if let Ok(n) = part.parse() {
                out.insert(n);
            }
        }
    }
    if let Some(node) = line.get("comment_id").and_then(Value::as_str) {
        if let Some(n) = node.rsplit(|c: char| !c.is_ascii_digit()).next() {
            if let Ok(n) = n.parse::<u64>() {
                out.insert(n);
            }
        }
    }
    out
}

/// The numbers and ids an event touches.
fn touched(e: &Event) -> Vec<u64> {
    match &e.fact {
        Fact::OpenIssue { number, .. }
        | Fact::OpenPr { number, .. }
        | Fact::Close { number, .. }
        | Fact::Reopen { number }
        | Fact::Merge { number, .. }
        | Fact::EditTitle { number, .. }
        | Fact::EditBody { number, .. }
        | Fact::Label { number, .. }
        | Fact::Unlabel { number, .. }
        | Fact::Assign { number, .. }
        | Fact::Unassign { number, .. }
        | Fact::Milestone { number, .. }
        | Fact::Demilestone { number }
        | Fact::RequestReview { number, .. }
        | Fact::RemoveReviewRequest { number, .. }
        | Fact::Lock { number, .. }
        | Fact::Silent { number, .. }
        | Fact::DismissReview { number, .. }
        | Fact::ResolveThread { number, .. }
        | Fact::Push { number, .. }
        | Fact::ForcePush { number, .. }
        | Fact::TransferIssue { number, .. }
        | Fact::ReadyForReview { number }
        | Fact::ConvertToDraft { number }
        | Fact::OpenDiscussion { number, .. }
        | Fact::AnswerDiscussion { number, .. }
        | Fact::CloseDiscussion { number, .. }
        | Fact::ReopenDiscussion { number }
        | Fact::DiscussionAct { number, .. }
        | Fact::SetIssueType { number, .. }
        | Fact::DeleteIssue { number }
        | Fact::ChangeBase { number, .. }
        | Fact::RequestTeamReview { number, .. } => vec![*number],
        Fact::Comment { number, id, .. }
        | Fact::Review { number, id, .. }
        | Fact::ReviewComment { number, id, .. }
        | Fact::DiscussionComment { number, id, .. } => vec![*number, *id],
        Fact::EditComment { id, .. }
        | Fact::DeleteComment { id }
        | Fact::MinimizeComment { id, .. }
        | Fact::EditReview { id, .. }
        | Fact::EditReviewComment { id, .. }
        | Fact::DeleteReviewComment { id } => vec![*id],
        Fact::React { on, .. } => match on {
            ReactionOn::Thread(n) | ReactionOn::Comment(n) | ReactionOn::Discussion(n) => {
                vec![*n]
            }
        },
        Fact::LinkSubIssue { parent, child } | Fact::UnlinkSubIssue { parent, child } => {
            vec![*parent, *child]
        }
        Fact::OpenRevertPr {
            number, reverts, ..
        } => vec![*number, *reverts],
        Fact::RunRequested { id, .. } | Fact::RunCompleted { id, .. } => vec![*id],
        Fact::Check(act) => act.subject().into_iter().collect(),
        _ => Vec::new(),
    }
}

/// The events about an output's targets (for explaining a difference).
pub fn events_of<'g>(g: &'g Generated, id: &str) -> Vec<&'g Event> {
    let index: Option<usize> = id.rsplit(':').next().and_then(|i| i.parse().ok());
    let Some(line) = index.and_then(|i| g.runs.first()?.lines.get(i)) else {
        return Vec::new();
    };
    let mut keys = named(line);
    // A revert PR or an agent's PR is two numbers on: follow them.
    let extra: Vec<u64> = keys.iter().map(|n| n + 2).collect();
    keys.extend(extra);
    // A release is named by its tag.
    let tag = line.get("tag").and_then(Value::as_str);
    g.history
        .events
        .iter()
        .filter(|e| {
            touched(e).iter().any(|k| keys.contains(k))
                || tag.is_some_and(|t| release_tag(e) == Some(t))
                // A rename or a deletion bears on every output of the
                // repository.
                || e.fact.renamed_to().is_some()
                || matches!(e.fact, Fact::DeleteRepo | Fact::DeleteOwner)
                // The owner's project the line names (by `project`, or by
                // its `url` for the project create_project made).
                || project_of(line).is_some_and(|n| on_project(e, n))
                // A requested team's memberships, on the output that names it.
                || (requests_team(line) && matches!(e.fact, Fact::TeamMembership { .. }))
                // The deletion of the milestone the line names.
                || milestone_of(line).is_some_and(|m| {
                    matches!(e.fact, Fact::DeleteMilestone { milestone } if milestone == m)
                })
        })
        .collect()
}

/// The milestone an `assign_milestone` line names (`metadata.milestone_number`).
fn milestone_of(line: &Value) -> Option<u64> {
    line.pointer("/metadata/milestone_number")?.as_u64()
}

/// The number of the project a line names (`…/projects/{n}`, as its
/// `project` or its `url`).
fn project_of(line: &Value) -> Option<u64> {
    ["project", "url"].iter().find_map(|k| {
        let url = line.get(*k)?.as_str()?;
        url.split_once("/projects/")?.1.parse().ok()
    })
}

/// True for an act on the owner's project `number` (`world::projects`).
fn on_project(e: &Event, number: u64) -> bool {
    matches!(&e.fact, Fact::Project(act) if act.project() == number)
}

/// True for an `add_reviewer` line that requests a team.
fn requests_team(line: &Value) -> bool {
    line.pointer("/metadata/requested_team_reviewers").is_some()
}

/// The logins who reviewed or commented on the output's PR as people
/// (the acts a team request's member could satisfy it with).
fn acting_people<'e>(events: &[&'e Event]) -> Vec<&'e str> {
    events
        .iter()
        .filter(|e| !e.actor.bot)
        .filter(|e| {
            matches!(
                e.fact,
                Fact::Review { .. } | Fact::Comment { .. } | Fact::ReviewComment { .. }
            )
        })
        .map(|e| e.actor.login.as_str())
        .collect()
}

/// A team was requested and a person who was ever its member (from before
/// the history, or added in it) reviewed or commented: whether they were a
/// member is in no webhook unless their membership changed. (One never a
/// member is unknown alike on every path: no delivery, and a 404.)
fn team_act(events: &[&Event]) -> bool {
    use safe_outcomes::bench::github_model::world::teams::INITIAL;
    let ever_member = |login: &str| {
        INITIAL
            .iter()
            .any(|(_, members)| members.contains(&login))
            || events.iter().any(|e| {
                matches!(&e.fact, Fact::TeamMembership { login: l, member: true, .. } if l == login)
            })
    };
    events
        .iter()
        .any(|e| matches!(e.fact, Fact::RequestTeamReview { .. }))
        && acting_people(events).into_iter().any(ever_member)
}

/// A team was requested and a person whose membership of it changed in the
/// history reviewed or commented.
fn team_act_by_a_changed_member(events: &[&Event]) -> bool {
    let changed: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.fact {
            Fact::TeamMembership { login, .. } => Some(login.as_str()),
            _ => None,
        })
        .collect();
    team_act(events) && acting_people(events).iter().any(|l| changed.contains(l))
}

/// The tag of a release an event publishes or edits.
fn release_tag(e: &Event) -> Option<&str> {
    match &e.fact {
        Fact::PublishRelease { tag, .. }
        | Fact::EditRelease { tag, .. }
        | Fact::DeleteRelease { tag }
        | Fact::UnpublishRelease { tag } => Some(tag),
        _ => None,
    }
}

/// `Event` in one line.
pub struct Shown<'a>(pub &'a Event);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {:?}", self.0.at, self.0.actor.login, self.0.fact)
    }
}
