//! A project read from GraphQL (`graphql/project/<number>`,
//! `ProjectV2`), as the `projects_v2` webhooks give it: its creation by its
//! creator (`created`), and its close now (`closed`, `closedAt`). GitHub
//! names no closer of a project (GraphQL's `ProjectV2` nor REST's
//! `projects-v2`), so the close is nobody's: `create_project` reads it as a
//! close whose actor is unknown. Nor does it keep past closes: a project
//! reopened reads as never closed, as it is now.

use serde_json::Value;

use super::{str_of, Mapper};
use crate::ingest::reconcile::rest::{actor, time};
use crate::model::{ItemSnapshot, ObservationKind as K, TargetKind};

impl Mapper<'_> {
    /// `graphql/project/<number>`: filed under the record's project target.
    pub(super) fn project(&mut self, path: &str, v: &Value) {
        let Some(key) = self
            .record
            .target
            .as_ref()
            .filter(|t| t.kind == TargetKind::Project)
            .map(|t| t.key())
        else {
            return;
        };
        let closed = v.get("closed").and_then(Value::as_bool).unwrap_or(false);
        let snap = |state: &str| ItemSnapshot {
            kind: Some(TargetKind::Project),
            state: state.to_string(),
            title: str_of(v, "title"),
            ..ItemSnapshot::default()
        };
        if let Some(at) = time(v.get("createdAt")) {
            let who = actor(v.get("creator"));
            let opened = Some(snap("open"));
            self.push_snap(
                format!("api:{path}:created"),
                at,
                key.clone(),
                who,
                K::Opened,
                opened,
            );
        }
        if !closed {
            return;
        }
        let at = self.dated(v, &["closedAt", "updatedAt"]);
        let closed = Some(snap("closed"));
        self.push_snap(
            format!("api:{path}:closed"),
            at,
            key,
            None,
            K::Closed,
            closed,
        );
    }
}
