//! Test builders: concise execution records, observations and snapshots, and a
//! table runner that reports every failing row at once.
//!
//! Time is in hours after execution (`EXEC`), so a row reads like a timeline.

use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{DateTime, Duration, Utc};
use serde_json::{Map, Value};

use safe_outcomes_model::execution::Sources;
use safe_outcomes_model::{
    Actor, Evaluation, EvidenceStrength, ExecutionRecord, ItemSnapshot, Observation,
    ObservationKind, OutcomeStatus, Target, TargetKind,
};

pub const ACCEPTED: OutcomeStatus = OutcomeStatus::Accepted;
pub const REJECTED: OutcomeStatus = OutcomeStatus::Rejected;
pub const PENDING: OutcomeStatus = OutcomeStatus::Pending;
pub const IGNORED: OutcomeStatus = OutcomeStatus::Ignored;
pub const SKIPPED: OutcomeStatus = OutcomeStatus::Skipped;
pub const UNKNOWN: OutcomeStatus = OutcomeStatus::Unknown;
pub const STRONG: EvidenceStrength = EvidenceStrength::Strong;
pub const MEDIUM: EvidenceStrength = EvidenceStrength::Medium;
pub const WEAK: EvidenceStrength = EvidenceStrength::Weak;
pub const NONE: EvidenceStrength = EvidenceStrength::None;

pub const REPO: &str = "o/r";
/// The thread (issue or PR number) records target by default.
pub const NUMBER: u64 = 7;
/// The comment id `add_comment` records target by default.
pub const COMMENT_ID: u64 = 900;
/// The login the workflow writes as.
pub const WORKFLOW_LOGIN: &str = "github-actions[bot]";

/// Execution time of every test record.
pub fn exec_time() -> DateTime<Utc> {
    "2026-06-01T12:00:00Z".parse().unwrap()
}

/// A role (an assignment, a review request, a team membership) given and
/// taken away at the times `flips` (tenths of an hour after execution),
/// held from the start when `initially`: each change's hour with whether
/// the role is held after it, in time order (none at `act`, the time of
/// the act being judged), and whether it is held at `act`. For the
/// properties "an act counts exactly while its actor holds the role".
pub fn role_flips(mut flips: Vec<u32>, act: u32, initially: bool) -> (Vec<(f64, bool)>, bool) {
    flips.sort_unstable();
    flips.dedup();
    flips.retain(|f| *f != act);
    let (mut held, mut at_act) = (initially, initially);
    let mut changes = Vec::new();
    for f in flips {
        held = !held;
        if f < act {
            at_act = held;
        }
        changes.push((f as f64 / 10.0, held));
    }
    (changes, at_act)
}

/// `hours` after execution (fractions allowed; negative is before).
pub fn at(hours: f64) -> DateTime<Utc> {
    exec_time() + Duration::seconds((hours * 3600.0).round() as i64)
}

/// A record of `output_type` aimed at the natural target for that type.
pub fn record(output_type: &str) -> ExecutionRecord {
    let target = match output_type {
        "add_comment" => Target::comment(REPO, TargetKind::Comment, COMMENT_ID, Some(NUMBER)),
        t if t.contains("pull_request") => Target::thread(REPO, TargetKind::PullRequest, NUMBER),
        _ => Target::thread(REPO, TargetKind::Issue, NUMBER),
    };
    ExecutionRecord {
        id: ExecutionRecord::output_id(REPO, Some(123), "0"),
        output_type: output_type.to_string(),
        repo: REPO.to_string(),
        run_id: Some(123),
        index: Some(0),
        workflow: Some("test-workflow".to_string()),
        target: Some(target),
        executed_at: exec_time(),
        actor: Some(WORKFLOW_LOGIN.to_string()),
        sources: Sources {
            manifest: true,
            webhook: false,
        },
        ..ExecutionRecord::default()
    }
}

/// Chainable tweaks to a test record.
pub trait RecordExt: Sized {
    fn meta(self, key: &str, value: Value) -> Self;
    fn extra(self, key: &str, value: Value) -> Self;
    fn before(self, state: Value) -> Self;
    fn after(self, state: Value) -> Self;
    fn labels_added(self, labels: &[&str]) -> Self;
    fn no_target(self) -> Self;
    fn target(self, target: Target) -> Self;
    fn actor(self, login: Option<&str>) -> Self;
}

fn as_map(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("expected a JSON object, got {other}"),
    }
}

impl RecordExt for ExecutionRecord {
    fn meta(mut self, key: &str, value: Value) -> Self {
        self.metadata.insert(key.to_string(), value);
        self
    }
    fn extra(mut self, key: &str, value: Value) -> Self {
        self.extra.insert(key.to_string(), value);
        self
    }
    fn before(mut self, state: Value) -> Self {
        self.before_state = as_map(state);
        self
    }
    fn after(mut self, state: Value) -> Self {
        self.after_state = as_map(state);
        self
    }
    fn labels_added(mut self, labels: &[&str]) -> Self {
        self.labels_added = strings(labels);
        self
    }
    fn no_target(mut self) -> Self {
        self.target = None;
        self
    }
    fn target(mut self, target: Target) -> Self {
        self.target = Some(target);
        self
    }
    fn actor(mut self, login: Option<&str>) -> Self {
        self.actor = login.map(str::to_string);
        self
    }
}

pub fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

pub fn human(login: &str) -> Option<Actor> {
    Some(Actor::new(login, "User"))
}

pub fn bot(login: &str) -> Option<Actor> {
    Some(Actor::new(login, "Bot"))
}

/// The workflow's own actor (matches `record(..).actor`).
pub fn workflow_actor() -> Option<Actor> {
    bot(WORKFLOW_LOGIN)
}

/// Observation ids sort in creation order, which breaks ties at equal times.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// An observation `hours` after execution, filed under the default thread.
pub fn obs(hours: f64, actor: Option<Actor>, event: ObservationKind) -> Observation {
    let n = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    Observation {
        id: format!("delivery-{n:08}/0"),
        at: at(hours),
        target: format!("{REPO}#{NUMBER}"),
        actor,
        event,
        snapshot: None,
    }
}

/// Chainable tweaks to a test observation.
pub trait ObsExt: Sized {
    fn snap(self, snapshot: ItemSnapshot) -> Self;
}

impl ObsExt for Observation {
    fn snap(mut self, snapshot: ItemSnapshot) -> Self {
        self.snapshot = Some(snapshot);
        self
    }
}

/// The workflow's own creation of the target, just before execution time.
pub fn opened_by_workflow(snapshot: ItemSnapshot) -> Observation {
    obs(-0.01, workflow_actor(), ObservationKind::Opened).snap(snapshot)
}

/// A project or issue field changing value.
pub fn field(name: &str, from: Option<&str>, to: Option<&str>) -> ObservationKind {
    ObservationKind::FieldValueChanged {
        field: name.into(),
        from: from.map(str::to_string),
        to: to.map(str::to_string),
    }
}

/// A snapshot with `state` ("open"/"closed") and a fixed title.
pub fn snapshot(state: &str) -> ItemSnapshot {
    ItemSnapshot {
        state: state.to_string(),
        title: "Agent title".to_string(),
        ..ItemSnapshot::default()
    }
}

pub fn open() -> ItemSnapshot {
    snapshot("open")
}

/// Closed with a `state_reason` (issues).
pub fn closed_as(reason: Option<&str>) -> ItemSnapshot {
    ItemSnapshot {
        state_reason: reason.map(str::to_string),
        ..snapshot("closed")
    }
}

/// A merged PR snapshot, merged by `by`.
pub fn merged(by: Option<Actor>) -> ItemSnapshot {
    ItemSnapshot {
        merged: true,
        merged_by: by,
        ..snapshot("closed")
    }
}

pub fn with_labels(mut s: ItemSnapshot, labels: &[&str]) -> ItemSnapshot {
    s.labels = strings(labels);
    s
}

pub fn with_head(mut s: ItemSnapshot, sha: &str) -> ItemSnapshot {
    s.head_sha = Some(sha.to_string());
    s
}

pub fn comment(id: u64) -> ObservationKind {
    ObservationKind::CommentCreated {
        comment_id: id,
        agent_marker: false,
        lifecycle_marker: false,
        challenge: false,
    }
}

/// A comment whose body challenges a close (`model::challenge`).
pub fn challenge(id: u64) -> ObservationKind {
    ObservationKind::CommentCreated {
        comment_id: id,
        agent_marker: false,
        lifecycle_marker: false,
        challenge: true,
    }
}

/// gh-aw's expiry-close notice.
pub fn expiry_notice(id: u64) -> ObservationKind {
    ObservationKind::CommentCreated {
        comment_id: id,
        agent_marker: true,
        lifecycle_marker: true,
        challenge: false,
    }
}

pub fn review(id: u64, state: &str) -> ObservationKind {
    ObservationKind::ReviewSubmitted {
        review_id: id,
        state: state.to_string(),
    }
}

pub fn labeled(label: &str) -> ObservationKind {
    ObservationKind::Labeled {
        label: label.to_string(),
    }
}

pub fn unlabeled(label: &str) -> ObservationKind {
    ObservationKind::Unlabeled {
        label: label.to_string(),
    }
}

pub fn title_edit(from: &str) -> ObservationKind {
    ObservationKind::Edited {
        title_from: Some(from.to_string()),
        body_hash_from: None,
        base_from: None,
    }
}

pub fn sync(before: &str, after: &str) -> ObservationKind {
    ObservationKind::Synchronize {
        before: before.to_string(),
        after: after.to_string(),
    }
}

pub fn push(before: &str, after: &str, forced: bool, messages: &[&str]) -> ObservationKind {
    ObservationKind::Pushed {
        git_ref: "refs/heads/agent-branch".to_string(),
        before: before.to_string(),
        after: after.to_string(),
        forced,
        commits: messages
            .iter()
            .enumerate()
            .map(|(i, m)| safe_outcomes_model::observation::PushedCommit {
                sha: format!("{after}-{i}"),
                message: m.to_string(),
                ..Default::default()
            })
            .collect(),
    }
}

/// Evaluate through the public entry point (registry, cut at as-of, sorting).
pub fn eval(
    record: &ExecutionRecord,
    mut observations: Vec<Observation>,
    as_of_hours: f64,
) -> Evaluation {
    observations.sort_by(|a, b| (a.at, &a.id).cmp(&(b.at, &b.id)));
    super::evaluate(record, &observations, at(as_of_hours))
}

/// One table row: a timeline and the outcome it must produce. A row made
/// by [`row`] takes its table's record and as-of time ([`run_with`]) unless
/// it names its own ([`Case::on`], [`Case::at`]).
pub struct Case {
    pub name: &'static str,
    pub record: Option<ExecutionRecord>,
    pub obs: Vec<Observation>,
    pub as_of_hours: Option<f64>,
    pub want: (OutcomeStatus, EvidenceStrength, &'static str),
}

impl Case {
    /// This row's own record instead of the table's.
    pub fn on(mut self, record: ExecutionRecord) -> Case {
        self.record = Some(record);
        self
    }

    /// This row's own as-of time (hours after execution).
    pub fn at(mut self, as_of_hours: f64) -> Case {
        self.as_of_hours = Some(as_of_hours);
        self
    }
}

/// A table's rows, one case a line, as a timeline and the outcome it must
/// produce: `"name": [observations] => (STATUS, STRENGTH, "signal");` (the
/// observations an array, or any expression that makes a `Vec`), with
/// `, at HOURS` and `, on RECORD` after the outcome where the row names its
/// own time or record ([`Case::at`], [`Case::on`]); `+ CASE;` puts in a
/// [`Case`] built otherwise (`+ no_target_case(r());`). Yields `Vec<Case>`.
macro_rules! rows {
    (@ [$($done:expr),*]) => { vec![$($done),*] };
    (@ [$($done:expr),*] + $case:expr; $($rest:tt)*) => {
        $crate::evaluate::testkit::rows!(@ [$($done,)* $case] $($rest)*)
    };
    (@ [$($done:expr),*]
        $name:literal: $obs:expr => $want:expr $(, $m:ident $a:expr)*; $($rest:tt)*) => {
        $crate::evaluate::testkit::rows!(@ [$($done,)*
            $crate::evaluate::testkit::row($name, Vec::from($obs), $want)$(.$m($a))*]
            $($rest)*)
    };
    ($($rest:tt)*) => { $crate::evaluate::testkit::rows!(@ [] $($rest)*) };
}
pub(crate) use rows;

/// Run a table of [`rows!`] with [`run_with`]: `run_rows!(RECORD, HOURS; ROWS)`.
#[cfg(test)]
macro_rules! run_rows {
    ($record:expr, $as_of_hours:expr; $($rows:tt)*) => {
        $crate::evaluate::testkit::run_with($record,
            $as_of_hours,
            $crate::evaluate::testkit::rows![$($rows)*],
        )
    };
}
#[cfg(test)]
pub(crate) use run_rows;

/// A row that names everything.
pub fn case(
    name: &'static str,
    record: ExecutionRecord,
    obs: Vec<Observation>,
    as_of_hours: f64,
    want: (OutcomeStatus, EvidenceStrength, &'static str),
) -> Case {
    row(name, obs, want).on(record).at(as_of_hours)
}

/// A row on its table's record and as-of time.
pub fn row(
    name: &'static str,
    obs: Vec<Observation>,
    want: (OutcomeStatus, EvidenceStrength, &'static str),
) -> Case {
    Case {
        name,
        record: None,
        obs,
        as_of_hours: None,
        want,
    }
}

/// The row for a record without a target: its reference is missing.
pub fn no_target_case(record: ExecutionRecord) -> Case {
    let want = (UNKNOWN, NONE, "missing_reference");
    case("no target", record.no_target(), vec![], 24.0, want)
}

/// The row `name`: nothing of the target observed yet, a day on.
pub fn unobserved_case(name: &'static str, record: ExecutionRecord) -> Case {
    case(
        name,
        record,
        vec![],
        24.0,
        (UNKNOWN, NONE, "target_unobserved"),
    )
}

/// The rows a value-setting type shares (seed 000 general rules 3 and 6):
/// the value kept through the 24h window is accepted; kept before it passed
/// (`early` hours), pending on `waiting`; put back by a person, rejected
/// (reverted, strong); by a bot (`bot_login`), unknown (weak). `ours` is
/// the output's own change, `undo(actor)` the change back.
pub fn undo_rows(
    ours: impl Fn() -> Observation,
    undo: impl Fn(Option<Actor>) -> Observation,
    bot_login: &str,
    (waiting, early): (&'static str, f64),
) -> Vec<Case> {
    rows![
        "kept through the window": [ours()] => (ACCEPTED, MEDIUM, "state_retained");
        "kept, window not passed": [ours()] => (PENDING, WEAK, waiting), at early;
        "put back by a human": [ours(), undo(human("alice"))] => (REJECTED, STRONG, "state_reverted");
        "put back by a bot": [ours(), undo(bot(bot_login))] => (UNKNOWN, WEAK, "state_changed_by_bot");
    ]
}

/// Run every row (each names its record and time); panic listing all rows
/// whose triple differs.
pub fn run(cases: Vec<Case>) {
    for c in &cases {
        assert!(
            c.record.is_some() && c.as_of_hours.is_some(),
            "{}: a row of `run` names its record and time (or use `run_with`)",
            c.name
        );
    }
    run_table(None, cases);
}

/// Run every row, `record` and `as_of_hours` standing in for what a row does
/// not name; panic listing all rows whose triple differs.
pub fn run_with(record: ExecutionRecord, as_of_hours: f64, cases: Vec<Case>) {
    run_table(Some((record, as_of_hours)), cases);
}

fn run_table(defaults: Option<(ExecutionRecord, f64)>, cases: Vec<Case>) {
    assert!(!cases.is_empty(), "empty table");
    let mut failures = Vec::new();
    for c in cases {
        let record = c.record.or_else(|| defaults.as_ref().map(|d| d.0.clone()));
        let as_of = c.as_of_hours.or(defaults.as_ref().map(|d| d.1));
        let got = eval(&record.expect("a record"), c.obs, as_of.expect("a time"));
        let (status, strength, signal) = got.triple();
        if (status, strength, signal.as_str()) != c.want {
            failures.push(format!(
                "{}: want {:?}, got ({:?}, {:?}, {:?}) — {}",
                c.name, c.want, status, strength, signal, got.notes
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// A reaction (`content` by REST's name) on the item (`None`) or a comment.
pub fn reacted(content: &str, comment_id: Option<u64>) -> ObservationKind {
    ObservationKind::Reacted {
        content: content.to_string(),
        comment_id,
    }
}

/// The apparatus checked against itself: a table runner that cannot fail
/// and a property's oracle that answers a constant would leave every table
/// and property above passing whatever the evaluators do.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "a wrong row: want")]
    fn a_table_fails_on_a_row_the_evaluator_does_not_give() {
        run_rows!(record("update_issue"), 24.0;
            "a wrong row": [] => (ACCEPTED, STRONG, "merged");
        );
    }

    #[test]
    #[should_panic(expected = "a wrong row: want")]
    fn a_table_of_named_rows_fails_on_a_wrong_row() {
        run(vec![case(
            "a wrong row",
            record("update_issue"),
            vec![],
            24.0,
            (ACCEPTED, STRONG, "merged"),
        )]);
    }

    /// Changes sorted, repeated ones once, none at the act itself; the role
    /// at the act is the one after the last change before it.
    #[test]
    fn role_flips_gives_each_change_and_the_role_at_the_act() {
        let (changes, held) = role_flips(vec![30, 10, 10, 40, 50], 40, true);
        assert_eq!(changes, vec![(1.0, false), (3.0, true), (5.0, false)]);
        assert!(held);
        let (changes, held) = role_flips(vec![20], 10, false);
        assert_eq!(changes, vec![(2.0, true)]);
        assert!(!held);
    }
}
