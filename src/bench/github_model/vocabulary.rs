//! What the model of GitHub says, measured against what GitHub documents
//! (issue 44, item 1). Two lists, in one place:
//!
//! - **spoken**: every timeline event kind (`event` of
//!   `issues/{n}/timeline`) and every webhook `event.action` the model
//!   emits for the histories the generator writes. It is not a hand list:
//!   `spoken` runs the generator (`generate::history`, every registered
//!   type) over a fixed set of seeds and collects what the model's own
//!   renderers (`objects::timeline_event`, `webhooks::deliveries`) put on
//!   the wire, with the class of the actor who did it. A kind the generator
//!   stops writing drops out of it by itself.
//! - **unspoken** (`IRRELEVANT_TIMELINE`, `IRRELEVANT_WEBHOOKS`): each kind
//!   GitHub documents that the model does not generate, with the reason it
//!   cannot change a verdict.
//!
//! `tests/it/vocabulary.rs` reads GitHub's descriptions (`@octokit/openapi`,
//! `@octokit/graphql-schema`'s timeline item enums, `@octokit/openapi-webhooks`
//! and `@octokit/webhooks-examples`) and fails on a documented kind that is
//! in neither list, on a listed kind GitHub no longer documents, and on a
//! kind in both.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};

use super::generate::{self, Choices};
use super::history::{Actor, Fact, History};
use super::world::World;
use super::{objects, webhooks};
use crate::judge::evaluate::registry::TYPES;
use crate::model::OutputType;

/// Who did an act, relative to the output it touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ActorClass {
    /// The identity gh-aw writes as (`github-actions[bot]`).
    Agent,
    /// Any other bot (`[bot]` login or `type: Bot`).
    OtherBot,
    /// The person who opened the issue or PR the act is on.
    Author,
    /// A person named by the item (an assignee or a requested reviewer).
    Named,
    /// Any other person (a maintainer).
    Maintainer,
}

/// Kinds the model emits, each with the actor classes seen doing it.
#[derive(Debug, Clone, Default)]
pub struct Spoken {
    /// Timeline `event` values, `-` written `_` (`cross_referenced`).
    pub timeline: BTreeMap<String, BTreeSet<ActorClass>>,
    /// Webhook `event.action` (`push` alone: it has no action).
    pub webhooks: BTreeMap<String, BTreeSet<ActorClass>>,
}

/// The seeds `spoken` generates from: enough that every follow-up the
/// generator can choose is chosen (the test checks the result against the
/// descriptions, so a kind reached too rarely shows as missing).
pub const SEEDS: u64 = 200;

/// A timeline kind as the test compares it: `cross-referenced` and
/// `cross_referenced` are one kind.
pub fn kind(s: &str) -> String {
    s.replace('-', "_")
}

/// Everything the generator makes the model say over `seeds` histories.
pub fn spoken(seeds: u64) -> Spoken {
    let types: Vec<OutputType> = TYPES.iter().map(|t| OutputType::from(t.name)).collect();
    let t0: DateTime<Utc> = "2026-10-01T12:00:00Z".parse().expect("a time");
    let mut out = Spoken::default();
    for seed in 0..seeds {
        let bytes = generate::seeded(seed, 600);
        let mut c = Choices::new(&bytes);
        let g = generate::history(&mut c, "acme/widgets", 555, t0, 4242, &types);
        collect(&g.history, &mut out);
    }
    out
}

fn collect(h: &History, out: &mut Spoken) {
    let end = h.events.last().map(|e| e.at).unwrap_or_default() + Duration::days(1);
    let world = World::at(h, end);
    let threads = world
        .threads
        .values()
        .chain(world.moved.values().map(|m| &m.thread));
    for t in threads {
        for e in &t.timeline {
            let Some(v) = objects::timeline_event(&world, t, e) else {
                continue;
            };
            let Some(event) = v["event"].as_str() else {
                continue;
            };
            let class = class_of(&e.actor, t.user.login.as_str(), named(h, t.number));
            out.timeline.entry(kind(event)).or_default().insert(class);
        }
    }
    for d in webhooks::deliveries(h) {
        let key = match d.body["action"].as_str() {
            Some(a) => format!("{}.{a}", d.event),
            None => d.event.clone(),
        };
        let sender = Actor {
            login: d.body["sender"]["login"].as_str().unwrap_or("").into(),
            bot: d.body["sender"]["type"] == "Bot",
        };
        let author = ["issue", "pull_request", "discussion"]
            .iter()
            .find_map(|k| d.body[k]["user"]["login"].as_str())
            .unwrap_or("");
        let number = ["issue", "pull_request", "discussion"]
            .iter()
            .find_map(|k| d.body[k]["number"].as_u64())
            .unwrap_or(0);
        let class = class_of(&sender, author, named(h, number));
        out.webhooks.entry(key).or_default().insert(class);
    }
}

/// The people item `number` ever named (assignees, requested reviewers).
fn named(h: &History, number: u64) -> BTreeSet<String> {
    h.events
        .iter()
        .filter_map(|e| match &e.fact {
            Fact::Assign { number: n, login } if *n == number => Some(login.clone()),
            Fact::RequestReview {
                number: n,
                reviewer,
            } if *n == number => Some(reviewer.clone()),
            _ => None,
        })
        .collect()
}

fn class_of(actor: &Actor, author: &str, named: BTreeSet<String>) -> ActorClass {
    if *actor == Actor::actions() {
        ActorClass::Agent
    } else if actor.bot || actor.login.ends_with("[bot]") {
        ActorClass::OtherBot
    } else if actor.login == author {
        ActorClass::Author
    } else if named.contains(&actor.login) {
        ActorClass::Named
    } else {
        ActorClass::Maintainer
    }
}

/// Read alike on both paths as an act with no rule of its own: the
/// webhook's action and the timeline's entry both become the same
/// unnamed act of their actor (`ObservationKind::Other`), counted alike.
const READ_ALIKE: &str = "read alike on both paths: the webhook action and the timeline entry become the same unnamed act of its actor (ObservationKind::Other), which no rule names";
const CLASSIC_PROJECTS: &str = "Projects (classic), which GitHub sunset in 2024: no new entries; projects v2 items come by `projects_v2_item`";

const ORG_MEMBERSHIP: &str = "organization membership: no rule reads it (verdicts ask whether an actor is a bot, and what a requested user or team did; none asks org membership, and no normalizer reads `organization` deliveries); the App reads `member_removed` only to end that member's dashboard sessions (`http::auth::access`, tested there)";

/// A milestone's lifecycle short of its deletion.
const MILESTONE_LIFE: &str = "a milestone's own lifecycle: assign_milestone is judged by the item's milestone (`issues.milestoned`/`demilestoned`, generated) and by the milestone's deletion (`milestone.deleted`, generated; general rule 15), and no rule reads a milestone's creation, edit, close or reopening";

/// Timeline kinds GitHub documents that the model does not generate, and
/// why none can change a verdict. Keys as `kind` writes them.
pub const IRRELEVANT_TIMELINE: &[(&str, &str)] = &[
    ("added_to_merge_queue", READ_ALIKE),
    ("removed_from_merge_queue", READ_ALIKE),
    ("auto_merge_enabled", READ_ALIKE),
    ("auto_merge_disabled", READ_ALIKE),
    ("auto_rebase_enabled", "GraphQL's name of an auto-merge by rebase; REST's timeline (which the API path reads) and the webhook say `auto_merge_enabled`, read alike; the merge it leads to is `merged` (generated)"),
    ("auto_squash_enabled", "GraphQL's name of an auto-merge by squash; REST's timeline (which the API path reads) and the webhook say `auto_merge_enabled`, read alike; the merge it leads to is `merged` (generated)"),
    ("pinned", READ_ALIKE),
    ("unpinned", READ_ALIKE),
    ("added_to_project", CLASSIC_PROJECTS),
    ("moved_columns_in_project", CLASSIC_PROJECTS),
    ("removed_from_project", CLASSIC_PROJECTS),
    ("converted_note_to_issue", CLASSIC_PROJECTS),
    ("pull_request_revision_marker", "GraphQL's marker of what the viewer last saw of a PR: no act, no actor, not in REST's timeline"),
    ("line_commented", "REST's grouping of review comments in a timeline: the API path reads review comments from `pulls/N/comments` and GraphQL's review threads (the model serves both), never from this entry"),
    ("commit_commented", "a comment on a commit (no output writes one); the API path skips it, and `commit_comment` is no event the App subscribes to"),
];

/// Documented kinds that can matter and the model does not generate yet:
/// what they would take. Not a reason they cannot matter: a list of gaps,
/// counted apart by the vocabulary test (and in docs/evaluation.md).
pub const NOT_YET_TIMELINE: &[(&str, &str)] = &[
    ("converted_to_discussion", "an issue converted to a discussion: GitHub documents the entry in GraphQL's `IssueTimelineItems` only (REST's timeline, which the API path reads, has no such event schema), and its descriptions say neither what REST answers for the converted issue afterwards nor which webhooks go (a `discussion.created`; an `issues` action?): not modelled until that is known"),
];

/// Webhook `event.action`s of the events the App subscribes to that the
/// model does not generate, and why none can change a verdict.
pub const IRRELEVANT_WEBHOOKS: &[(&str, &str)] = &[
    ("projects_v2.edited", "a project's title or description edited: create_project's rules read its close and the items people add to it, update_project its item's field, create_project_status_update its status update (`crates/judge/src/evaluate/project.rs`); no rule reads an edit"),
    ("installation.created", "the App's installation lifecycle (tests/it/github_app.rs and tenancy.rs drive it): no fact about an output"),
    ("installation.deleted", "the App's installation lifecycle (tests/it/github_app.rs and tenancy.rs drive it): no fact about an output"),
    ("installation.new_permissions_accepted", "the App's installation lifecycle: no fact about an output"),
    ("installation.suspend", "the App's installation lifecycle (tenancy.rs): no fact about an output"),
    ("installation.unsuspend", "the App's installation lifecycle (tenancy.rs): no fact about an output"),
    ("installation_repositories.added", "which repositories the App sees (tenancy.rs): no fact about an output"),
    ("installation_repositories.removed", "which repositories the App sees (tenancy.rs): no fact about an output"),
    ("issues.pinned", READ_ALIKE),
    ("issues.unpinned", READ_ALIKE),
    ("pull_request.auto_merge_enabled", READ_ALIKE),
    ("pull_request.auto_merge_disabled", READ_ALIKE),
    ("pull_request.enqueued", READ_ALIKE),
    ("pull_request.dequeued", READ_ALIKE),
    ("pull_request.merged", "not an action GitHub sends: webhooks-examples files merges under it, which arrive as `pull_request.closed` with `merged: true` (generated)"),
    ("milestone.created", MILESTONE_LIFE),
    ("milestone.opened", MILESTONE_LIFE),
    ("milestone.closed", MILESTONE_LIFE),
    ("milestone.edited", MILESTONE_LIFE),
    ("projects_v2_status_update.created", "a project's status note: no output writes one, no rule reads one"),
    ("projects_v2_status_update.edited", "a project's status note: no output writes one, no rule reads one"),
    ("projects_v2_status_update.deleted", "a project's status note: no output writes one, no rule reads one"),
    ("release.created", "sent with `release.published` (generated) for the same release: rules read the release's body"),
    ("release.released", "sent with `release.published` (generated) for the same release: rules read the release's body"),
    ("release.prereleased", "sent with `release.published` (generated) for a prerelease: rules read the release's body"),
    ("workflow_run.in_progress", "a run between `requested` and `completed` (both generated): outputs are harvested from the completed run"),
    ("repository.created", "a new repository holds no output yet (`installation_repositories.added` tells the App it may see it)"),
    ("repository.edited", "a repository's description, homepage or topics: no rule reads them"),
    ("repository.archived", "a repository made read-only: nothing more happens to its objects, which the verdicts already hold"),
    ("repository.unarchived", "a repository writable again: what follows comes by its own events"),
    ("repository.privatized", "a repository's visibility: no rule reads it (who may read it is the installation's and the viewer's, asked of GitHub)"),
    ("repository.publicized", "a repository's visibility: no rule reads it (who may read it is the installation's and the viewer's, asked of GitHub)"),
    ("organization.member_added", ORG_MEMBERSHIP),
    ("organization.member_invited", ORG_MEMBERSHIP),
    ("organization.member_removed", ORG_MEMBERSHIP),
];

/// Webhook actions that can matter and the model does not generate yet.
pub const NOT_YET_WEBHOOKS: &[(&str, &str)] = &[];
