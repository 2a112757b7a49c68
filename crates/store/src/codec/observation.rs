//! The v3 form of an observation: its target and its item snapshot.

use super::{kind_code, kind_of, ActorV3, Hash, Stored, Time};
use safe_outcomes_model::{ItemSnapshot, Observation, Target};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
pub(super) struct ObservationV3 {
    pub(super) id: String,
    pub(super) at: Time,
    pub(super) target: String,
    pub(super) actor: Option<ActorV3>,
    /// `ObservationKind` as JSON.
    pub(super) event: String,
    pub(super) snapshot: Option<SnapshotV3>,
}

impl From<&Observation> for ObservationV3 {
    fn from(o: &Observation) -> ObservationV3 {
        ObservationV3 {
            id: o.id.clone(),
            at: o.at.into(),
            target: o.target.clone(),
            actor: o.actor.as_ref().map(ActorV3::from),
            event: serde_json::to_string(&o.event).expect("a kind serializes"),
            snapshot: o.snapshot.as_ref().map(SnapshotV3::from),
        }
    }
}

impl Stored<Observation> for ObservationV3 {
    fn into_model(self) -> std::result::Result<Observation, String> {
        Ok(Observation {
            id: self.id,
            at: self.at.into_model()?,
            target: self.target,
            actor: self.actor.map(ActorV3::into_model),
            event: serde_json::from_str(&self.event).map_err(|e| e.to_string())?,
            snapshot: self.snapshot.map(SnapshotV3::into_model).transpose()?,
        })
    }
}

#[derive(Serialize, Deserialize)]
pub(super) struct SnapshotV3 {
    pub(super) kind: Option<u8>,
    pub(super) state: String,
    pub(super) state_reason: Option<String>,
    pub(super) merged: bool,
    pub(super) draft: bool,
    pub(super) title: String,
    pub(super) body_hash: Hash,
    pub(super) labels: Vec<String>,
    pub(super) assignees: Vec<String>,
    pub(super) milestone: Option<String>,
    pub(super) milestone_number: Option<u64>,
    pub(super) milestone_absent: bool,
    pub(super) assignees_absent: bool,
    pub(super) base: Option<String>,
    pub(super) head_ref: Option<String>,
    pub(super) head_sha: Option<String>,
    pub(super) requested_reviewers: Vec<String>,
    pub(super) requested_teams: Vec<String>,
    pub(super) reviewers_known: bool,
    pub(super) author: Option<ActorV3>,
    pub(super) merged_by: Option<ActorV3>,
    pub(super) merge_commit_sha: Option<String>,
    pub(super) issue_type: Option<String>,
    pub(super) answer_comment_id: Option<u64>,
}

impl From<&ItemSnapshot> for SnapshotV3 {
    fn from(s: &ItemSnapshot) -> SnapshotV3 {
        SnapshotV3 {
            kind: s.kind.map(kind_code),
            state: s.state.clone(),
            state_reason: s.state_reason.clone(),
            merged: s.merged,
            draft: s.draft,
            title: s.title.clone(),
            body_hash: Hash::from(s.body_hash.as_str()),
            labels: s.labels.clone(),
            assignees: s.assignees.clone(),
            milestone: s.milestone.clone(),
            milestone_number: s.milestone_number,
            milestone_absent: s.milestone_absent,
            assignees_absent: s.assignees_absent,
            base: s.base.clone(),
            head_ref: s.head_ref.clone(),
            head_sha: s.head_sha.clone(),
            requested_reviewers: s.requested_reviewers.clone(),
            requested_teams: s.requested_teams.clone(),
            reviewers_known: s.reviewers_known,
            author: s.author.as_ref().map(ActorV3::from),
            merged_by: s.merged_by.as_ref().map(ActorV3::from),
            merge_commit_sha: s.merge_commit_sha.clone(),
            issue_type: s.issue_type.clone(),
            answer_comment_id: s.answer_comment_id,
        }
    }
}

impl SnapshotV3 {
    pub(super) fn into_model(self) -> std::result::Result<ItemSnapshot, String> {
        Ok(ItemSnapshot {
            kind: self.kind.map(kind_of).transpose()?,
            state: self.state,
            state_reason: self.state_reason,
            merged: self.merged,
            draft: self.draft,
            title: self.title,
            body_hash: self.body_hash.into_model(),
            labels: self.labels,
            assignees: self.assignees,
            milestone: self.milestone,
            milestone_number: self.milestone_number,
            milestone_absent: self.milestone_absent,
            assignees_absent: self.assignees_absent,
            base: self.base,
            head_ref: self.head_ref,
            head_sha: self.head_sha,
            requested_reviewers: self.requested_reviewers,
            requested_teams: self.requested_teams,
            reviewers_known: self.reviewers_known,
            author: self.author.map(ActorV3::into_model),
            merged_by: self.merged_by.map(ActorV3::into_model),
            merge_commit_sha: self.merge_commit_sha,
            issue_type: self.issue_type,
            answer_comment_id: self.answer_comment_id,
        })
    }
}

#[derive(Serialize, Deserialize, PartialEq)]
pub(super) struct TargetV3 {
    pub(super) repo: String,
    pub(super) kind: u8,
    pub(super) number: Option<u64>,
    pub(super) id: Option<u64>,
    pub(super) node_id: Option<String>,
    pub(super) url: Option<String>,
    pub(super) parent_number: Option<u64>,
    pub(super) git_ref: Option<String>,
    pub(super) name: Option<String>,
}

impl From<&Target> for TargetV3 {
    fn from(t: &Target) -> TargetV3 {
        TargetV3 {
            repo: t.repo.clone(),
            kind: kind_code(t.kind),
            number: t.number,
            id: t.id,
            node_id: t.node_id.clone(),
            url: t.url.clone(),
            parent_number: t.parent_number,
            git_ref: t.git_ref.clone(),
            name: t.name.clone(),
        }
    }
}

impl TargetV3 {
    pub(super) fn into_model(self) -> std::result::Result<Target, String> {
        Ok(Target {
            repo: self.repo,
            kind: kind_of(self.kind)?,
            number: self.number,
            id: self.id,
            node_id: self.node_id,
            url: self.url,
            parent_number: self.parent_number,
            git_ref: self.git_ref,
            name: self.name,
        })
    }
}
