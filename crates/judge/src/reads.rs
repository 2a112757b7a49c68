//! What each path reads, as one table (issue 44 item 2): for each output
//! type, the facts its evaluator needs — a fact is what changed, who changed
//! it and when — the webhook events and actions that carry each fact, and
//! the API reads (REST endpoint, timeline kind or GraphQL field) that
//! recover each part of it on the reconcile and backfill path.
//!
//! The table is checked against the readers themselves (`reads_tests.rs`):
//! - every webhook source names an event the webhook extractor handles, and
//!   every fact the extractor draws from a real payload (fixtures/webhooks,
//!   and ../shared/fixtures/webhooks) is listed under that event and action;
//! - the API reads of each type are exactly what the reconciler and backfill
//!   GET for it (`ingest::reconcile::required_endpoints`, `follow_up_endpoints`)
//!   plus what the signal fetcher reads for it (`github::signals::needs`):
//!   nothing is read that the table does not name, nothing the table names
//!   is left unread;
//! - each timeline kind the table names becomes, through the API mapper
//!   (`ingest::reconcile::observations_from_api`), an observation of the
//!   fact's kind, with the entry's actor and time;
//! - each evaluator family reads only observation kinds of facts its types
//!   list here;
//! - a fact with a webhook source recovers what, who and when from the API,
//!   or says why not (`Need::note`): reactions have no webhook, a deleted
//!   object leaves no author of its deletion, and so on.
//!
//! `safe-outcomes spec` prints the table into docs/evaluation.md ("What each
//! path reads").

/// One fact, as the observations it becomes and the webhooks that carry it.
pub struct Fact {
    /// Its name in the table.
    pub name: &'static str,
    /// What changed, in words.
    pub what: &'static str,
    /// The `ObservationKind`s (their serde tag) the fact becomes.
    pub kinds: &'static [&'static str],
    /// `event.action` of each webhook delivery that carries it (`push` has
    /// no action). Empty: GitHub sends no webhook for it.
    pub webhook: &'static [&'static str],
}

/// Which reader performs a read.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Via {
    /// The reconciler's and backfill's fetch (`github::fetch`).
    Fetch,
    /// The signal fetcher at the window checkpoints (`github::signals`).
    Signal,
}

/// One API read that recovers (a part of) a fact.
pub struct Api {
    /// The path, relative to `repos/{owner}/{repo}/` (GraphQL results under
    /// their `graphql/...` keys). Placeholders: `{n}` the thread, `{p}` the
    /// parent issue, `{id}` the comment, `{node}` a node id, `{run}`,
    /// `{check}`, `{alert}`, `{tag}`, `{sha}` the pushed commit, `{merge}`
    /// the merge commit, `{base}` the base branch, `{m}` a cross-referenced
    /// PR, `{since}` the execution time less a minute, `{project}` a project's
    /// number under its owner (the target's), `{org}`, `{team}`,
    /// `{login}`.
    pub read: &'static str,
    /// What in the answer is the fact: a timeline kind (for a `timeline`
    /// read), a field, or the answer's status.
    pub item: &'static str,
    /// The field naming who (empty: the read does not say).
    pub who: &'static str,
    /// The field giving when (empty: the read does not say).
    pub when: &'static str,
    /// Which reader performs it.
    pub via: Via,
}

/// One fact a type needs, and how the API path recovers it.
pub struct Need {
    /// The fact.
    pub fact: &'static Fact,
    /// The API reads that recover it (empty: none does, see `note`).
    pub api: &'static [Api],
    /// Why the API does not recover what, who or when (required when the
    /// fact has a webhook source and the reads miss a part), or a limit.
    pub note: &'static str,
}

/// The shape of the record's target, which decides the reads.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Shape {
    /// A pull request, by number.
    PullRequest,
    /// An issue, by number.
    Issue,
    /// A conversation comment, by id, on its issue or PR.
    Comment,
    /// An inline review comment, by id, on its PR.
    ReviewComment,
    /// A sub-issue link: the child issue, with its parent.
    SubIssue,
    /// A discussion, by number.
    Discussion,
    /// A comment by node id (hide_comment).
    Node,
    /// A workflow run by id.
    Run,
    /// A repository dispatch: no run id.
    Dispatch,
    /// A check run by id.
    CheckRun,
    /// A code-scanning alert by number.
    Alert,
    /// A release by tag.
    Release,
    /// A project item.
    Project,
    /// Nothing on GitHub.
    Nothing,
}

/// The facts of some types on one target shape.
pub struct Profile {
    /// The safe-output types.
    pub types: &'static [&'static str],
    /// Their target's shape.
    pub shape: Shape,
    /// The facts they need.
    pub needs: &'static [Need],
}

const fn fact(
    name: &'static str,
    what: &'static str,
    kinds: &'static [&'static str],
    webhook: &'static [&'static str],
) -> Fact {
    Fact {
        name,
        what,
        kinds,
        webhook,
    }
}

const fn api(read: &'static str, item: &'static str, who: &'static str, when: &'static str) -> Api {
    Api {
        read,
        item,
        who,
        when,
        via: Via::Fetch,
    }
}

const fn signal(
    read: &'static str,
    item: &'static str,
    who: &'static str,
    when: &'static str,
) -> Api {
    Api {
        read,
        item,
        who,
        when,
        via: Via::Signal,
    }
}

/// A timeline entry of kind `kind` on thread `{n}`: its `actor` and `created_at`.
const fn tl(kind: &'static str) -> Api {
    api("issues/{n}/timeline", kind, "actor", "created_at")
}

const fn need(fact: &'static Fact, api: &'static [Api]) -> Need {
    Need {
        fact,
        api,
        note: "",
    }
}

const fn noted(fact: &'static Fact, api: &'static [Api], note: &'static str) -> Need {
    Need { fact, api, note }
}

// The facts.

/// The fact `opened`: the item was opened.
pub const OPENED: Fact = fact(
    "opened",
    "the item was opened",
    &["opened"],
    &["issues.opened", "pull_request.opened", "discussion.created"],
);
/// The fact `closed`: the item was closed or merged (and by which PR).
pub const CLOSED: Fact = fact(
    "closed",
    "the item was closed or merged (and by which PR)",
    &["closed", "closed_by"],
    &["issues.closed", "pull_request.closed", "discussion.closed"],
);
/// The fact `reopened`: the item was reopened.
pub const REOPENED: Fact = fact(
    "reopened",
    "the item was reopened",
    &["reopened"],
    &[
        "issues.reopened",
        "pull_request.reopened",
        "discussion.reopened",
    ],
);
/// The fact `deleted`: the item was deleted.
pub const DELETED: Fact = fact(
    "deleted",
    "the item was deleted",
    &["deleted"],
    &["issues.deleted", "discussion.deleted"],
);
/// The fact `transferred`: the item was moved to another repository.
pub const TRANSFERRED: Fact = fact(
    "transferred",
    "the item was moved to another repository",
    &["transferred"],
    &["issues.transferred", "discussion.transferred"],
);
/// The fact `title_edited`: the title was changed.
pub const TITLE_EDITED: Fact = fact(
    "title_edited",
    "the title was changed",
    &["edited"],
    &["issues.edited", "pull_request.edited", "discussion.edited"],
);
/// The fact `body_edited`: the body was changed.
pub const BODY_EDITED: Fact = fact(
    "body_edited",
    "the body was changed",
    &["edited"],
    &["issues.edited", "pull_request.edited", "discussion.edited"],
);
/// The fact `base_changed`: the PR's base branch was changed.
pub const BASE_CHANGED: Fact = fact(
    "base_changed",
    "the PR's base branch was changed",
    &["edited"],
    &["pull_request.edited"],
);
/// The fact `labeled`: a label was added or removed.
pub const LABELED: Fact = fact(
    "labeled",
    "a label was added or removed",
    &["labeled", "unlabeled"],
    &[
        "issues.labeled",
        "issues.unlabeled",
        "pull_request.labeled",
        "pull_request.unlabeled",
        "discussion.labeled",
        "discussion.unlabeled",
    ],
);
/// The fact `assigned`: an assignee was added or removed.
pub const ASSIGNED: Fact = fact(
    "assigned",
    "an assignee was added or removed",
    &["assigned", "unassigned"],
    &[
        "issues.assigned",
        "issues.unassigned",
        "pull_request.assigned",
        "pull_request.unassigned",
    ],
);
/// The fact `milestoned`: the milestone was set or cleared.
pub const MILESTONED: Fact = fact(
    "milestoned",
    "the milestone was set or cleared",
    &["milestoned", "demilestoned"],
    &["issues.milestoned", "issues.demilestoned"],
);
/// The fact `issue_typed`: the issue type was set or cleared.
pub const ISSUE_TYPED: Fact = fact(
    "issue_typed",
    "the issue type was set or cleared",
    &["issue_typed", "issue_untyped"],
    &["issues.typed", "issues.untyped"],
);
/// The fact `review_requested`: a review was requested or the request removed.
pub const REVIEW_REQUESTED: Fact = fact(
    "review_requested",
    "a review was requested or the request removed",
    &["review_requested", "review_request_removed"],
    &[
        "pull_request.review_requested",
        "pull_request.review_request_removed",
    ],
);
/// The fact `draft`: the PR was marked ready for review or turned back into a draft.
pub const DRAFT: Fact = fact(
    "draft",
    "the PR was marked ready for review or turned back into a draft",
    &["ready_for_review", "converted_to_draft"],
    &[
        "pull_request.ready_for_review",
        "pull_request.converted_to_draft",
    ],
);
/// The fact `head_pushed`: commits were pushed to the PR head (forced or not).
pub const HEAD_PUSHED: Fact = fact(
    "head_pushed",
    "commits were pushed to the PR head (forced or not)",
    &["synchronize", "pushed"],
    &["pull_request.synchronize", "push"],
);
/// The fact `on_base`: the pushed commit is (or is not) in what the merge put on the base.
pub const ON_BASE: Fact = fact(
    "on_base",
    "the pushed commit is (or is not) in what the merge put on the base",
    &["compared", "pushed"],
    &["push"],
);
/// The fact `reverted`: a commit or PR was reverted.
pub const REVERTED: Fact = fact(
    "reverted",
    "a commit or PR was reverted",
    &["reverted"],
    &["push", "pull_request.closed"],
);
/// The fact `cross_referenced`: another issue or PR mentioned this one.
pub const CROSS_REFERENCED: Fact = fact(
    "cross_referenced",
    "another issue or PR mentioned this one",
    &["cross_referenced"],
    &["issues.opened", "pull_request.opened"],
);
/// The fact `comment`: a conversation comment was written (with its challenge or marker).
pub const COMMENT: Fact = fact(
    "comment",
    "a conversation comment was written (with its challenge or marker)",
    &["comment_created"],
    &["issue_comment.created", "discussion_comment.created"],
);
/// The fact `comment_deleted`: a conversation comment was deleted.
pub const COMMENT_DELETED: Fact = fact(
    "comment_deleted",
    "a conversation comment was deleted",
    &["comment_deleted"],
    &["issue_comment.deleted", "discussion_comment.deleted"],
);
/// The fact `comment_edited`: a conversation comment was edited.
pub const COMMENT_EDITED: Fact = fact(
    "comment_edited",
    "a conversation comment was edited",
    &["comment_edited"],
    &["issue_comment.edited", "discussion_comment.edited"],
);
/// The fact `review`: a review was submitted (its state).
pub const REVIEW: Fact = fact(
    "review",
    "a review was submitted (its state)",
    &["review_submitted"],
    &["pull_request_review.submitted"],
);
/// The fact `review_dismissed`: a review was dismissed.
pub const REVIEW_DISMISSED: Fact = fact(
    "review_dismissed",
    "a review was dismissed",
    &["review_dismissed"],
    &["pull_request_review.dismissed"],
);
/// The fact `review_comment`: an inline review comment or reply was written.
pub const REVIEW_COMMENT: Fact = fact(
    "review_comment",
    "an inline review comment or reply was written",
    &["review_comment_created"],
    &["pull_request_review_comment.created"],
);
/// The fact `review_comment_deleted`: an inline review comment was deleted.
pub const REVIEW_COMMENT_DELETED: Fact = fact(
    "review_comment_deleted",
    "an inline review comment was deleted",
    &["review_comment_deleted"],
    &["pull_request_review_comment.deleted"],
);
/// The fact `thread_resolved`: a review thread was resolved or unresolved.
pub const THREAD_RESOLVED: Fact = fact(
    "thread_resolved",
    "a review thread was resolved or unresolved",
    &["thread_resolved", "thread_unresolved"],
    &[
        "pull_request_review_thread.resolved",
        "pull_request_review_thread.unresolved",
    ],
);
/// The fact `minimized`: a comment was hidden or shown again.
pub const MINIMIZED: Fact = fact(
    "minimized",
    "a comment was hidden or shown again",
    &["comment_minimized", "comment_unminimized"],
    &[],
);
/// The fact `reaction`: someone reacted to the item or a comment.
pub const REACTION: Fact = fact(
    "reaction",
    "someone reacted to the item or a comment",
    &["reacted"],
    &[],
);
/// The fact `team_member`: a reviewer belongs to a requested team (a
/// change dated by `membership`; a read tells membership now, undated).
pub const TEAM_MEMBER: Fact = fact(
    "team_member",
    "a reviewer belongs to a requested team",
    &["team_member"],
    &["membership.added", "membership.removed"],
);
/// The fact `sub_issue`: a sub-issue link was added or removed.
pub const SUB_ISSUE: Fact = fact(
    "sub_issue",
    "a sub-issue link was added or removed",
    &["sub_issue_added", "sub_issue_removed"],
    &[
        "sub_issues.sub_issue_added",
        "sub_issues.sub_issue_removed",
        "sub_issues.parent_issue_added",
        "sub_issues.parent_issue_removed",
    ],
);
/// The fact `project_item`: a project item was added, removed, archived or restored.
pub const PROJECT_ITEM: Fact = fact(
    "project_item",
    "a project item was added, removed, archived or restored",
    &[
        "project_item_added",
        "project_item_removed",
        "project_item_restored",
    ],
    &[
        "projects_v2_item.created",
        "projects_v2_item.deleted",
        "projects_v2_item.archived",
        "projects_v2_item.restored",
    ],
);
/// The fact `field_value`: a project field value was changed.
pub const FIELD_VALUE: Fact = fact(
    "field_value",
    "a project field value was changed",
    &["field_value_changed"],
    &["projects_v2_item.edited"],
);
/// The fact `project_changed`: a project (or its status update) was created, edited, closed or deleted.
pub const PROJECT_CHANGED: Fact = fact(
    "project_changed",
    "a project (or its status update) was created, edited, closed or deleted",
    &[
        "opened",
        "closed",
        "reopened",
        "edited",
        "deleted",
        "comment_created",
        "comment_edited",
        "comment_deleted",
    ],
    &[
        "projects_v2.created",
        "projects_v2.edited",
        "projects_v2.closed",
        "projects_v2.reopened",
        "projects_v2.deleted",
        "projects_v2_status_update.created",
        "projects_v2_status_update.edited",
        "projects_v2_status_update.deleted",
    ],
);
/// The fact `answered`: a discussion answer was marked or unmarked.
pub const ANSWERED: Fact = fact(
    "answered",
    "a discussion answer was marked or unmarked",
    &["answered", "unanswered"],
    &["discussion.answered", "discussion.unanswered"],
);
/// The fact `workflow_run`: a workflow run was requested, ran or completed.
pub const WORKFLOW_RUN: Fact = fact(
    "workflow_run",
    "a workflow run was requested, ran or completed",
    &["workflow_run"],
    &[
        "workflow_run.requested",
        "workflow_run.in_progress",
        "workflow_run.completed",
    ],
);
/// The fact `check_run`: a check run or suite was created, re-requested or completed.
pub const CHECK_RUN: Fact = fact(
    "check_run",
    "a check run or suite was created, re-requested or completed",
    &["check_run", "check_suite"],
    &[
        "check_run.created",
        "check_run.completed",
        "check_run.rerequested",
        "check_suite.requested",
        "check_suite.completed",
    ],
);
/// The fact `alert`: a code-scanning alert changed state.
pub const ALERT: Fact = fact(
    "alert",
    "a code-scanning alert changed state",
    &["alert_changed"],
    &[
        "code_scanning_alert.created",
        "code_scanning_alert.fixed",
        "code_scanning_alert.closed_by_user",
        "code_scanning_alert.reopened",
        "code_scanning_alert.reopened_by_user",
        "code_scanning_alert.appeared_in_branch",
    ],
);
/// The fact `release`: a release was published, edited, unpublished or deleted.
pub const RELEASE: Fact = fact(
    "release",
    "a release was published, edited, unpublished or deleted",
    &["release_changed", "edited"],
    &[
        "release.published",
        "release.edited",
        "release.deleted",
        "release.unpublished",
        "release.released",
        "release.prereleased",
        "release.created",
    ],
);

/// The fact `milestone_changed`: a milestone was created, edited, closed or deleted (assign_milestone reads its deletion).
pub const MILESTONE_CHANGED: Fact = fact(
    "milestone_changed",
    "a milestone was created, edited, closed or deleted (assign_milestone reads its deletion)",
    &["milestone_changed"],
    &[
        "milestone.created",
        "milestone.opened",
        "milestone.edited",
        "milestone.closed",
        "milestone.deleted",
    ],
);

/// Every fact, for the checks and the docs.
pub const FACTS: &[&Fact] = &[
    &OPENED,
    &CLOSED,
    &REOPENED,
    &DELETED,
    &TRANSFERRED,
    &TITLE_EDITED,
    &BODY_EDITED,
    &BASE_CHANGED,
    &LABELED,
    &ASSIGNED,
    &MILESTONED,
    &ISSUE_TYPED,
    &REVIEW_REQUESTED,
    &DRAFT,
    &HEAD_PUSHED,
    &ON_BASE,
    &REVERTED,
    &CROSS_REFERENCED,
    &COMMENT,
    &COMMENT_DELETED,
    &COMMENT_EDITED,
    &REVIEW,
    &REVIEW_DISMISSED,
    &REVIEW_COMMENT,
    &REVIEW_COMMENT_DELETED,
    &THREAD_RESOLVED,
    &MINIMIZED,
    &REACTION,
    &TEAM_MEMBER,
    &SUB_ISSUE,
    &PROJECT_ITEM,
    &FIELD_VALUE,
    &PROJECT_CHANGED,
    &ANSWERED,
    &WORKFLOW_RUN,
    &CHECK_RUN,
    &ALERT,
    &RELEASE,
    &MILESTONE_CHANGED,
];

// Notes shared by several rows.

const GONE: &str = "GitHub keeps no trace of a deletion: the primary read's 404/410 is the fact, dated at the read, by nobody named";
const BODY: &str = "the REST object has only the current body and `updated_at`, not who edited it (GraphQL `userContentEdits` would name the editor; not read yet): the current body is compared, and the change is dated but not attributed";
const NO_REST_HISTORY_DISCUSSION: &str = "a discussion has no REST timeline: GraphQL gives its current state only, so the change is seen (the state) but not who made it or when";
const PROJECTS: &str = "Projects v2 items are not read from the API (GraphQL `ProjectV2.items` / `ProjectV2Item.fieldValues` would give them as they are now; not read yet): a project's items, their field values and its status updates are judged from webhooks only";

const PROJECT_CLOSER: &str = "GitHub names who created a project, not who closed it (GraphQL's `ProjectV2` has `closed`/`closedAt`, REST's `projects-v2` `state`/`closed_at`, neither a closer), nor keeps its past closes: a close is read as a close by an unknown actor (`close_actor_unknown`), and one reopened since is not seen; a deleted project answers NOT_FOUND, naming neither who deleted it nor when";

const RESOLVED_WHEN: &str =
    "GraphQL names who resolved a thread but not when: the change is dated at the read";

// Reads shared by several rows.

const PR_OPENED: &[Api] = &[api("pulls/{n}", "created_at, user", "user", "created_at")];
const PR_CLOSED: &[Api] = &[
    api(
        "pulls/{n}",
        "state, merged",
        "merged_by",
        "closed_at, merged_at",
    ),
    tl("closed"),
];
const ISSUE_CLOSED: &[Api] = &[
    api(
        "issues/{n}",
        "state, state_reason",
        "closed_by",
        "closed_at",
    ),
    tl("closed"),
];
const REOPEN: &[Api] = &[tl("reopened")];
const PR_GONE: &[Api] = &[api("pulls/{n}", "404/410", "", "")];
const ISSUE_GONE: &[Api] = &[api("issues/{n}", "404/410", "", "")];
const MOVED: &[Api] = &[api("issues/{n}", "301 Location", "", ""), tl("transferred")];
const PR_COMMITS: &[Api] = &[
    api(
        "pulls/{n}/commits",
        "sha, parents",
        "author.login",
        "commit.committer.date",
    ),
    tl("head_ref_force_pushed"),
];
/// A thread's conversation comments, from its timeline: the same objects
/// as `issues/{n}/comments`, which is not read beside it.
const TIMELINE_COMMENTS: &[Api] = &[tl("commented")];
/// A PR's reviews, from its timeline: the same objects as
/// `pulls/{n}/reviews` (its `state` lower-case, `dismissed` once
/// dismissed), which is not read beside it.
const PR_REVIEWS: &[Api] = &[api(
    "issues/{n}/timeline",
    "reviewed",
    "user",
    "submitted_at",
)];
const PR_DISMISSED: &[Api] = &[tl("review_dismissed")];
/// The review list as the primary object (the review types, gh-aw's), and
/// the timeline's.
const LISTED_REVIEWS: &[Api] = &[
    api("pulls/{n}/reviews", "state", "user", "submitted_at"),
    api("issues/{n}/timeline", "reviewed", "user", "submitted_at"),
];
const LISTED_DISMISSED: &[Api] = &[
    tl("review_dismissed"),
    api("pulls/{n}/reviews", "state DISMISSED", "", ""),
];
const PR_REVIEW_COMMENTS: &[Api] = &[api(
    "pulls/{n}/comments",
    "in_reply_to_id, pull_request_review_id",
    "user",
    "created_at",
)];
const LABEL_EVENTS: &[Api] = &[tl("labeled"), tl("unlabeled")];
const ASSIGN_EVENTS: &[Api] = &[tl("assigned"), tl("unassigned")];
const MERGE_REVERTS: &[Api] = &[
    api(
        "compare/{merge}...{base}",
        "commits: `This reverts commit …`",
        "author.login",
        "commit.committer.date",
    ),
    tl("cross-referenced"),
];
const CROSS_REF: &[Api] = &[tl("cross-referenced")];
const TITLE: &[Api] = &[tl("renamed")];
const PR_BODY: &[Api] = &[api("pulls/{n}", "body", "", "updated_at")];
const ISSUE_BODY: &[Api] = &[api("issues/{n}", "body", "", "updated_at")];
const ITEM_REACTIONS: &[Api] = &[signal(
    "issues/{n}/reactions",
    "reactions (GraphQL, batched)",
    "user",
    "createdAt",
)];

/// Every type's facts and reads.
pub const PROFILES: &[Profile] = &[
    Profile {
        types: &["create_pull_request"],
        shape: Shape::PullRequest,
        needs: &[
            need(&OPENED, PR_OPENED),
            need(&CLOSED, PR_CLOSED),
            need(&REOPENED, REOPEN),
            noted(&DELETED, PR_GONE, GONE),
            need(&HEAD_PUSHED, PR_COMMITS),
            need(&REVERTED, MERGE_REVERTS),
            need(&COMMENT, TIMELINE_COMMENTS),
            need(&REVIEW, PR_REVIEWS),
            need(&REVIEW_DISMISSED, PR_DISMISSED),
            need(&REACTION, ITEM_REACTIONS),
        ],
    },
    Profile {
        types: &["create_pull_request"],
        shape: Shape::Issue,
        needs: &[
            need(&CROSS_REFERENCED, CROSS_REF),
            need(&COMMENT, TIMELINE_COMMENTS),
            need(&CLOSED, ISSUE_CLOSED),
            noted(&DELETED, ISSUE_GONE, GONE),
        ],
    },
    Profile {
        types: &["push_to_pull_request_branch"],
        shape: Shape::PullRequest,
        needs: &[
            need(&HEAD_PUSHED, PR_COMMITS),
            need(
                &ON_BASE,
                &[api(
                    "compare/{sha}...{merge}",
                    "status (ahead/identical/behind/diverged)",
                    "",
                    "merge: pulls/{n} merged_at",
                ),
                api("pulls/{n}", "merge_commit_sha", "merged_by", "merged_at")],
            ),
            need(&REVERTED, MERGE_REVERTS),
            need(&CLOSED, PR_CLOSED),
            need(&REOPENED, REOPEN),
            noted(&DELETED, PR_GONE, GONE),
            need(&COMMENT, TIMELINE_COMMENTS),
            need(&REVIEW, PR_REVIEWS),
            need(&REVIEW_DISMISSED, PR_DISMISSED),
        ],
    },
    Profile {
        types: &["close_pull_request"],
        shape: Shape::PullRequest,
        needs: &[
            need(&CLOSED, PR_CLOSED),
            need(&REOPENED, REOPEN),
            need(&COMMENT, TIMELINE_COMMENTS),
        ],
    },
    Profile {
        types: &["merge_pull_request"],
        shape: Shape::PullRequest,
        needs: &[
            need(&CLOSED, PR_CLOSED),
            need(&REVERTED, MERGE_REVERTS),
            need(&REOPENED, REOPEN),
            noted(&DELETED, PR_GONE, GONE),
        ],
    },
    Profile {
        types: &["update_pull_request"],
        shape: Shape::PullRequest,
        needs: &[
            need(&TITLE_EDITED, TITLE),
            noted(&BODY_EDITED, PR_BODY, BODY),
            need(
                &BASE_CHANGED,
                &[
                    tl("base_ref_changed"),
                    api("pulls/{n}", "base.ref", "", ""),
                    api(
                        "graphql/base_changes/{n}",
                        "previousRefName, currentRefName",
                        "actor",
                        "createdAt",
                    ),
                ],
            ),
            need(&LABELED, LABEL_EVENTS),
            need(&ASSIGNED, ASSIGN_EVENTS),
            need(
                &DRAFT,
                &[tl("ready_for_review"), tl("convert_to_draft")],
            ),
            need(&CLOSED, PR_CLOSED),
            need(&REOPENED, REOPEN),
            need(&HEAD_PUSHED, PR_COMMITS),
            noted(&DELETED, PR_GONE, GONE),
        ],
    },
    Profile {
        types: &["mark_pull_request_as_ready_for_review"],
        shape: Shape::PullRequest,
        needs: &[
            need(
                &DRAFT,
                &[tl("ready_for_review"), tl("convert_to_draft"), api("pulls/{n}", "draft", "", "")],
            ),
            need(&REVIEW, LISTED_REVIEWS),
            need(&CLOSED, PR_CLOSED),
            need(&OPENED, PR_OPENED),
            noted(&DELETED, PR_GONE, GONE),
        ],
    },
    Profile {
        types: &["submit_pull_request_review", "dismiss_pull_request_review"],
        shape: Shape::PullRequest,
        needs: &[
            need(&REVIEW, LISTED_REVIEWS),
            need(&REVIEW_DISMISSED, LISTED_DISMISSED),
            need(&REVIEW_COMMENT, PR_REVIEW_COMMENTS),
            need(&HEAD_PUSHED, PR_COMMITS),
            need(&CLOSED, PR_CLOSED),
            noted(&DELETED, PR_GONE, GONE),
        ],
    },
    Profile {
        types: &["add_reviewer"],
        shape: Shape::PullRequest,
        needs: &[
            need(
                &REVIEW_REQUESTED,
                &[
                    tl("review_requested"),
                    tl("review_request_removed"),
                    api(
                        "pulls/{n}/requested_reviewers",
                        "users, teams (pending now)",
                        "",
                        "",
                    ),
                ],
            ),
            need(&REVIEW, LISTED_REVIEWS),
            need(&REVIEW_COMMENT, PR_REVIEW_COMMENTS),
            need(&COMMENT, TIMELINE_COMMENTS),
            need(&CLOSED, PR_CLOSED),
            noted(
                &TEAM_MEMBER,
                &[signal(
                    "orgs/{org}/teams/{team}/memberships/{login}",
                    "state active",
                    "",
                    "undated: membership at the read",
                )],
                "GitHub keeps no history of a team's membership: the endpoint answers membership now (404 for a non-member, as for a team the App cannot see), not when it changed nor who changed it; only `membership.added`/`removed` date a change (a stated difference of the differential)",
            ),
        ],
    },
    Profile {
        types: &[
            "create_pull_request_review_comment",
            "reply_to_pull_request_review_comment",
        ],
        shape: Shape::ReviewComment,
        needs: &[
            need(
                &REVIEW_COMMENT,
                &[
                    api("pulls/comments/{id}", "the comment", "user", "created_at"),
                    api(
                        "graphql/review_threads/{n}",
                        "reviewThreads.comments",
                        "author",
                        "createdAt",
                    ),
                ],
            ),
            noted(
                &REVIEW_COMMENT_DELETED,
                &[api("pulls/comments/{id}", "404/410", "", "")],
                GONE,
            ),
            noted(
                &THREAD_RESOLVED,
                &[api(
                    "graphql/review_threads/{n}",
                    "isResolved",
                    "resolvedBy",
                    "",
                )],
                RESOLVED_WHEN,
            ),
            noted(
                &MINIMIZED,
                &[api(
                    "graphql/review_threads/{n}",
                    "comments.isMinimized, minimizedReason",
                    "",
                    "",
                )],
                "no webhook; GraphQL says the state, not who hid it or when",
            ),
            need(&CLOSED, &[api("pulls/{n}", "state, merged", "merged_by", "closed_at")]),
        ],
    },
    Profile {
        types: &["resolve_pull_request_review_thread"],
        shape: Shape::PullRequest,
        needs: &[
            noted(
                &THREAD_RESOLVED,
                &[api(
                    "graphql/review_threads/{n}",
                    "isResolved",
                    "resolvedBy",
                    "",
                )],
                RESOLVED_WHEN,
            ),
            need(&CLOSED, &[api("pulls/{n}", "state, merged", "merged_by", "closed_at")]),
            need(&OPENED, &[api("pulls/{n}", "created_at, user", "user", "created_at")]),
            noted(&DELETED, &[api("graphql/review_threads/{n}", "pullRequest null", "", "")], GONE),
        ],
    },
    Profile {
        types: &["create_issue"],
        shape: Shape::Issue,
        needs: &[
            need(&OPENED, &[api("issues/{n}", "created_at, user", "user", "created_at")]),
            need(
                &CLOSED,
                &[
                    api("issues/{n}", "state, state_reason", "closed_by", "closed_at"),
                    tl("closed"),
                    signal("graphql/closed_by/{n}", "ClosedEvent.closer", "", "createdAt"),
                ],
            ),
            need(&REOPENED, REOPEN),
            noted(&DELETED, ISSUE_GONE, GONE),
            noted(&TRANSFERRED, MOVED, "the 301's `Location` says where; the old timeline's `transferred` entry, when GitHub keeps it, says who and when"),
            need(&COMMENT, TIMELINE_COMMENTS),
            need(&LABELED, LABEL_EVENTS),
            need(&ASSIGNED, ASSIGN_EVENTS),
            need(&MILESTONED, &[tl("milestoned"), tl("demilestoned")]),
            need(&CROSS_REFERENCED, CROSS_REF),
            need(&REACTION, ITEM_REACTIONS),
        ],
    },
    Profile {
        types: &["close_issue"],
        shape: Shape::Issue,
        needs: &[
            need(&CLOSED, ISSUE_CLOSED),
            need(&REOPENED, REOPEN),
            need(&COMMENT, TIMELINE_COMMENTS),
            noted(&DELETED, ISSUE_GONE, GONE),
            noted(&TRANSFERRED, MOVED, "the 301's `Location` says where; the old timeline's `transferred` entry, when GitHub keeps it, says who and when"),
        ],
    },
    Profile {
        types: &["update_issue"],
        shape: Shape::Issue,
        needs: &[
            need(&TITLE_EDITED, TITLE),
            noted(&BODY_EDITED, ISSUE_BODY, BODY),
            need(&LABELED, LABEL_EVENTS),
            need(&ASSIGNED, ASSIGN_EVENTS),
            need(&CLOSED, ISSUE_CLOSED),
            need(&REOPENED, REOPEN),
            noted(&DELETED, ISSUE_GONE, GONE),
        ],
    },
    Profile {
        types: &["add_labels", "remove_labels", "replace_label"],
        shape: Shape::Issue,
        needs: &[
            need(
                &LABELED,
                &[
                    tl("labeled"),
                    tl("unlabeled"),
                    api("issues/{n}/labels", "names (now)", "", ""),
                ],
            ),
            need(&CLOSED, ISSUE_CLOSED),
            noted(&DELETED, &[api("issues/{n}/labels", "404/410", "", "")], GONE),
            need(&TITLE_EDITED, TITLE),
        ],
    },
    Profile {
        types: &["assign_milestone"],
        shape: Shape::Issue,
        needs: &[
            need(&MILESTONED, &[tl("milestoned"), tl("demilestoned")]),
            noted(
                &MILESTONE_CHANGED,
                &[api("milestones/{milestone}", "404: deleted (read while the item does not hold it)", "", "")],
                "GitHub answers a deleted milestone 404, naming neither who deleted it nor when (only `milestone.deleted` does): a deletion found by the read is dated at the read, by nobody named; its creation, edits and closes change no verdict",
            ),
            need(&CLOSED, ISSUE_CLOSED),
        ],
    },
    Profile {
        types: &["set_issue_type", "set_issue_field"],
        shape: Shape::Issue,
        needs: &[
            need(&MILESTONED, &[tl("milestoned"), tl("demilestoned")]),
            need(
                &ISSUE_TYPED,
                &[
                    tl("issue_type_added"),
                    tl("issue_type_changed"),
                    tl("issue_type_removed"),
                ],
            ),
            noted(&FIELD_VALUE, &[], "issue fields have no REST timeline entry and no API read yet: set_issue_field is judged from webhooks only"),
            need(&CLOSED, ISSUE_CLOSED),
        ],
    },
    Profile {
        types: &["link_sub_issue"],
        shape: Shape::SubIssue,
        needs: &[
            need(
                &SUB_ISSUE,
                &[
                    tl("parent_issue_added"),
                    tl("parent_issue_removed"),
                    api("issues/{p}/timeline", "sub_issue_added, sub_issue_removed", "actor", "created_at"),
                    api("issues/{n}", "parent_issue_url (now)", "", ""),
                    api("issues/{n}/parent", "number (now)", "", ""),
                    api("issues/{p}/sub_issues", "numbers (now)", "", ""),
                ],
            ),
            need(&CLOSED, ISSUE_CLOSED),
        ],
    },
    Profile {
        types: &["assign_to_user", "unassign_from_user", "create_agent_session"],
        shape: Shape::Issue,
        needs: &[
            need(&ASSIGNED, ASSIGN_EVENTS),
            need(&CLOSED, ISSUE_CLOSED),
            need(&CROSS_REFERENCED, CROSS_REF),
            need(&COMMENT, TIMELINE_COMMENTS),
        ],
    },
    Profile {
        types: &["assign_to_agent"],
        shape: Shape::Issue,
        needs: &[
            need(&ASSIGNED, ASSIGN_EVENTS),
            need(&CLOSED, ISSUE_CLOSED),
            need(&CROSS_REFERENCED, CROSS_REF),
            need(
                &OPENED,
                &[api(
                    "pulls/{m}",
                    "the agent's PR the timeline cross-references: created_at, user, state, merged",
                    "user, merged_by",
                    "created_at, closed_at",
                )],
            ),
            need(
                &REVIEW,
                &[api(
                    "pulls/{m}/reviews",
                    "the agent's PR approved",
                    "user",
                    "submitted_at",
                )],
            ),
            need(&COMMENT, TIMELINE_COMMENTS),
        ],
    },
    Profile {
        types: &["add_comment", "comment_memory"],
        shape: Shape::Comment,
        needs: &[
            need(
                &COMMENT,
                &[
                    api("issues/comments/{id}", "the comment", "user", "created_at"),
                    api("issues/{p}/comments", "later comments", "user", "created_at"),
                ],
            ),
            noted(&COMMENT_DELETED, &[api("issues/comments/{id}", "404/410", "", "")], GONE),
            need(
                &CLOSED,
                &[api("issues/{p}", "state, state_reason", "closed_by", "closed_at")],
            ),
            need(
                &REACTION,
                &[signal(
                    "issues/comments/{id}/reactions",
                    "content (GraphQL `node(id:)` in the batch; REST without a node id)",
                    "user",
                    "created_at",
                )],
            ),
        ],
    },
    Profile {
        types: &["hide_comment"],
        shape: Shape::Node,
        needs: &[
            noted(
                &MINIMIZED,
                &[api("graphql/minimized/{node}", "isMinimized, minimizedReason", "", "updatedAt")],
                "no webhook; GraphQL says the state, not who hid it",
            ),
            noted(
                &COMMENT_DELETED,
                &[api("graphql/minimized/{node}", "node null", "", "")],
                GONE,
            ),
            noted(
                &REVIEW_COMMENT_DELETED,
                &[api("graphql/minimized/{node}", "node null", "", "")],
                GONE,
            ),
            noted(&DELETED, &[api("graphql/minimized/{node}", "node null", "", "")], GONE),
        ],
    },
    Profile {
        types: &["create_discussion"],
        shape: Shape::Discussion,
        needs: &[
            need(&OPENED, &[api("graphql/discussion/{n}", "createdAt, author", "author", "createdAt")]),
            noted(&CLOSED, &[api("graphql/discussion/{n}", "closed, stateReason", "", "closedAt")], NO_REST_HISTORY_DISCUSSION),
            noted(&REOPENED, &[api("graphql/discussion/{n}", "closed false", "", "")], NO_REST_HISTORY_DISCUSSION),
            noted(&DELETED, &[api("graphql/discussion/{n}", "discussion null", "", "")], GONE),
            noted(&TITLE_EDITED, &[api("graphql/discussion/{n}", "title", "", "updatedAt")], NO_REST_HISTORY_DISCUSSION),
            noted(&BODY_EDITED, &[api("graphql/discussion/{n}", "body", "", "updatedAt")], NO_REST_HISTORY_DISCUSSION),
            noted(&LABELED, &[api("graphql/discussion/{n}", "labels (now)", "", "")], NO_REST_HISTORY_DISCUSSION),
            need(&COMMENT, &[api("graphql/discussion/{n}", "comments", "author", "createdAt")]),
            need(&ANSWERED, &[api("graphql/discussion/{n}", "answer", "answerChosenBy", "answerChosenAt")]),
            need(
                &REACTION,
                &[signal("graphql/discussion_reactions/{n}", "reactions", "user", "createdAt")],
            ),
        ],
    },
    Profile {
        types: &["update_discussion", "close_discussion"],
        shape: Shape::Discussion,
        needs: &[
            need(&OPENED, &[api("graphql/discussion/{n}", "createdAt, author", "author", "createdAt")]),
            noted(&CLOSED, &[api("graphql/discussion/{n}", "closed, stateReason", "", "closedAt")], NO_REST_HISTORY_DISCUSSION),
            noted(&REOPENED, &[api("graphql/discussion/{n}", "closed false", "", "")], NO_REST_HISTORY_DISCUSSION),
            noted(&DELETED, &[api("graphql/discussion/{n}", "discussion null", "", "")], GONE),
            noted(&TITLE_EDITED, &[api("graphql/discussion/{n}", "title", "", "updatedAt")], NO_REST_HISTORY_DISCUSSION),
            noted(&BODY_EDITED, &[api("graphql/discussion/{n}", "body", "", "updatedAt")], NO_REST_HISTORY_DISCUSSION),
            noted(&LABELED, &[api("graphql/discussion/{n}", "labels (now)", "", "")], NO_REST_HISTORY_DISCUSSION),
            need(&COMMENT, &[api("graphql/discussion/{n}", "comments", "author", "createdAt")]),
            need(&ANSWERED, &[api("graphql/discussion/{n}", "answer", "answerChosenBy", "answerChosenAt")]),
        ],
    },
    Profile {
        types: &["dispatch_workflow", "call_workflow", "approve_workflow_run"],
        shape: Shape::Run,
        needs: &[
            noted(
                &WORKFLOW_RUN,
                &[api("actions/runs/{run}", "status, conclusion, event", "triggering_actor", "updated_at")],
                "",
            ),
            noted(&CHECK_RUN, &[], "a run's check runs are not read: the run's own conclusion is read instead (`actions/runs/{run}`)"),
        ],
    },
    Profile {
        types: &["dispatch_repository"],
        shape: Shape::Dispatch,
        needs: &[
            need(
                &WORKFLOW_RUN,
                &[api(
                    "actions/runs?event=repository_dispatch&created={since}",
                    "runs it started",
                    "triggering_actor",
                    "created_at",
                )],
            ),
            noted(&CHECK_RUN, &[], "a run's check runs are not read: the runs' own conclusions are read instead"),
        ],
    },
    Profile {
        types: &["create_check_run"],
        shape: Shape::CheckRun,
        needs: &[
            need(
                &CHECK_RUN,
                &[
                    api("check-runs/{check}", "status, conclusion", "app", "completed_at"),
                    api("commits/{sha}/check-runs?check_name={name}", "the check runs of its name on its commit: a later one replaced it", "app", "started_at, completed_at"),
                ],
            ),
            need(
                &CLOSED,
                &[
                    api("pulls/{n}", "the PR the check reports on: state, merged", "merged_by", "closed_at, merged_at"),
                    tl("closed"),
                ],
            ),
            noted(&WORKFLOW_RUN, &[], "the check run's own state is read; runs are the workflow types' fact"),
        ],
    },
    Profile {
        types: &["autofix_code_scanning_alert", "create_code_scanning_alert"],
        shape: Shape::Alert,
        needs: &[need(
            &ALERT,
            &[api(
                "code-scanning/alerts/{alert}",
                "state, dismissed_reason",
                "dismissed_by, fixed_at",
                "updated_at",
            )],
        )],
    },
    Profile {
        types: &["update_release"],
        shape: Shape::Release,
        needs: &[
            noted(
                &RELEASE,
                &[api("releases/tags/{tag}", "name, body, draft, prerelease", "", "updated_at")],
                "a release shows its author and state, not who edited it later",
            ),
            noted(
                &DELETED,
                &[api("releases/tags/{tag}", "404 (deleted, or unpublished: a draft is not found by tag)", "", "")],
                GONE,
            ),
        ],
    },
    Profile {
        types: &["upload_asset", "push_repo_memory", "upload_artifact", "upload_code_coverage"],
        shape: Shape::Nothing,
        needs: &[
            noted(&RELEASE, &[], "no API read: these outputs are judged from what the record and webhooks say (the release or push they made)"),
            noted(&HEAD_PUSHED, &[], "no API read: a repo-memory push is judged from the `push` webhook"),
        ],
    },
    Profile {
        types: &["update_project", "create_project_status_update"],
        shape: Shape::Project,
        needs: &[
            noted(&PROJECT_ITEM, &[], PROJECTS),
            noted(&FIELD_VALUE, &[], PROJECTS),
            noted(&PROJECT_CHANGED, &[], PROJECTS),
        ],
    },
    Profile {
        types: &["create_project"],
        shape: Shape::Project,
        needs: &[
            noted(&PROJECT_ITEM, &[], PROJECTS),
            noted(
                &PROJECT_CHANGED,
                &[api(
                    "graphql/project/{project}",
                    "createdAt, closed, closedAt (now); NOT_FOUND once deleted",
                    "creator",
                    "createdAt, closedAt",
                )],
                PROJECT_CLOSER,
            ),
        ],
    },
    Profile {
        types: &["noop", "missing_tool", "missing_data", "report_incomplete"],
        shape: Shape::Nothing,
        needs: &[],
    },
];

/// The profiles of `output_type`.
pub fn profiles_of(output_type: &str) -> impl Iterator<Item = &'static Profile> + '_ {
    PROFILES
        .iter()
        .filter(move |p| p.types.contains(&output_type))
}

/// Whether `need` lacks a part (what, who or when) from the API.
pub fn api_misses_a_part(need: &Need) -> bool {
    let what = need.api.iter().any(|a| !a.item.is_empty());
    let who = need.api.iter().any(|a| !a.who.is_empty());
    let when = need.api.iter().any(|a| !a.when.is_empty());
    !(what && who && when)
}

/// The counts the docs and the report give, over every (type, fact) pair
/// (a profile's facts count once for each of its types): facts, those with
/// a webhook source, those with an API read, and the stated exceptions (a
/// note where the API misses what, who or when).
pub fn counts() -> (usize, usize, usize, usize) {
    let needs = || {
        PROFILES
            .iter()
            .flat_map(|p| p.types.iter().flat_map(move |_| p.needs.iter()))
    };
    let total = needs().count();
    let webhook = needs().filter(|n| !n.fact.webhook.is_empty()).count();
    let api = needs().filter(|n| !n.api.is_empty()).count();
    let exceptions = needs()
        .filter(|n| api_misses_a_part(n) && !n.note.is_empty())
        .count();
    (total, webhook, api, exceptions)
}

/// The table's own rules, in this crate (the App's `reads_tests.rs` checks
/// it against the readers): every registered type has its reads, a fact a
/// webhook carries is recovered from the API or says why not, and the
/// counts the docs give are over every (type, fact) pair.
#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::evaluate::registry::TYPES;

    fn read(item: &'static str, who: &'static str, when: &'static str) -> Api {
        Api {
            read: "issues/{n}",
            item,
            who,
            when,
            via: Via::Fetch,
        }
    }

    #[test]
    fn every_registered_type_has_its_reads_and_only_registered_types_do() {
        for t in TYPES {
            assert!(
                profiles_of(t.name).next().is_some(),
                "`{}` has no row in the read table",
                t.name
            );
        }
        assert_eq!(profiles_of("no_such_type").count(), 0);
        let mut seen = BTreeSet::new();
        for p in PROFILES {
            for ty in p.types {
                assert!(
                    TYPES.iter().any(|t| t.name == *ty),
                    "`{ty}` is not registered"
                );
                assert!(seen.insert((*ty, format!("{:?}", p.shape))), "`{ty}` twice");
                assert!(profiles_of(ty).any(|q| q.types == p.types && q.shape == p.shape));
            }
        }
    }

    /// Issue 44 item 2: a part (what, who, when) is missing unless some read
    /// gives it; parts may come from different reads.
    #[test]
    fn a_need_misses_a_part_unless_some_read_gives_it() {
        let need = |api: &'static [Api]| Need {
            fact: &CLOSED,
            api,
            note: "",
        };
        const ALL: &[Api] = &[Api {
            read: "issues/{n}",
            item: "state",
            who: "closed_by",
            when: "closed_at",
            via: Via::Fetch,
        }];
        assert!(!api_misses_a_part(&need(ALL)));
        let split: &'static [Api] = Box::leak(Box::new([
            read("state", "", ""),
            read("", "closed_by", ""),
            read("", "", "closed_at"),
        ]));
        assert!(!api_misses_a_part(&need(split)), "parts from three reads");
        for (what, who, when) in [
            ("", "closed_by", "closed_at"),
            ("state", "", "closed_at"),
            ("state", "closed_by", ""),
        ] {
            let one: &'static [Api] = Box::leak(Box::new([read(what, who, when)]));
            assert!(api_misses_a_part(&need(one)), "{what}/{who}/{when}");
        }
        assert!(api_misses_a_part(&need(&[])), "no read at all");
    }

    #[test]
    fn every_fact_a_webhook_carries_has_an_api_read_or_a_stated_reason() {
        let missing: Vec<String> = PROFILES
            .iter()
            .flat_map(|p| p.needs.iter().map(move |n| (p, n)))
            .filter(|(_, n)| !n.fact.webhook.is_empty() && api_misses_a_part(n))
            .filter(|(_, n)| n.note.is_empty())
            .map(|(p, n)| format!("{:?} / {}", p.types, n.fact.name))
            .collect();
        assert!(
            missing.is_empty(),
            "no API read and no reason: {missing:#?}"
        );
    }

    /// The counts docs/evaluation.md gives, each need counted once per type
    /// of its profile.
    #[test]
    fn the_counts_are_over_every_type_and_fact() {
        let (mut total, mut webhook, mut api, mut exceptions) = (0, 0, 0, 0);
        for p in PROFILES {
            let per_type = p.types.len();
            for n in p.needs {
                total += per_type;
                if !n.fact.webhook.is_empty() {
                    webhook += per_type;
                }
                if !n.api.is_empty() {
                    api += per_type;
                }
                if api_misses_a_part(n) && !n.note.is_empty() {
                    exceptions += per_type;
                }
            }
        }
        assert_eq!(counts(), (total, webhook, api, exceptions));
        // Each count tells something apart: some facts have no webhook,
        // some no API read, and some notes are limits, not exceptions.
        assert!(webhook < total && api < total && 0 < exceptions && exceptions < total);
        assert!(PROFILES
            .iter()
            .flat_map(|p| p.needs.iter())
            .any(|n| !api_misses_a_part(n) && !n.note.is_empty()));
    }
}
