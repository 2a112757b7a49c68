//! `milestone` events: created, opened, edited, closed, deleted. Filed under
//! the milestone's key (`object_key(repo, Milestone, number)`) as
//! `MilestoneChanged`, with its state and title as the snapshot. An
//! `assign_milestone` output watches its milestone's key: a deletion takes
//! the milestone off every item it held (general rule 15). A deletion is
//! dated at receipt: the payload is the milestone as it was.

use serde::Deserialize;
use serde_json::Value;

use super::{Ctx, Fact, NormResult, Output};
use crate::model::target::object_key;
use crate::model::{ItemSnapshot, ObservationKind as K, TargetKind};

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Body {
    milestone: Option<Milestone>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Milestone {
    number: Option<u64>,
    title: Option<String>,
    state: Option<String>,
    created_at: Option<Value>,
    updated_at: Option<Value>,
    closed_at: Option<Value>,
}

pub(super) fn normalize(ctx: &Ctx) -> NormResult {
    let body: Body = super::payload::shaped(ctx)?;
    let m = body
        .milestone
        .as_ref()
        .ok_or_else(|| ctx.lacks("milestone"))?;
    let number = m.number.ok_or("`milestone` has no number")?;
    let action = ctx.action();
    let own = [
        ("created", m.created_at.as_ref()),
        ("closed", m.closed_at.as_ref()),
    ];
    let updated = m.updated_at.as_ref();
    // A deleted milestone is sent as it was: nothing in it dates the
    // deletion, so the delivery's receipt does.
    let at = if action == "deleted" {
        super::UNDATED
    } else {
        ctx.fact_time("milestone", &own, updated, updated)?
    };
    let title = m.title.clone().unwrap_or_default();
    let kind = if action.is_empty() {
        ctx.other()
    } else {
        K::MilestoneChanged {
            milestone: title.clone(),
            action: action.to_string(),
        }
    };
    let mut out = Output::default();
    out.observations.push(Fact {
        at,
        target: object_key(ctx.repo, TargetKind::Milestone, &number.to_string()),
        kind,
        snapshot: Some(ItemSnapshot {
            kind: Some(TargetKind::Milestone),
            state: m.state.clone().unwrap_or_default(),
            title,
            ..ItemSnapshot::default()
        }),
    });
    Ok(out)
}

/// The events this family normalizes: `milestone`.
pub(super) const EVENTS: super::Events = &[("milestone", normalize)];

#[cfg(test)]
mod tests {
    use super::super::discussions::test_fixtures::{
        own_fixture, relevant_delivery, shared_fixtures_of, time,
    };
    use crate::model::ObservationKind as K;

    #[test]
    fn closed_milestone() {
        let d = relevant_delivery("milestone", &own_fixture("milestone/closed.json"));
        let o = &d.observations[0];
        assert_eq!(o.target, "acme/widgets#milestone:3");
        assert_eq!(
            o.event,
            K::MilestoneChanged {
                milestone: "v2.1".into(),
                action: "closed".into()
            }
        );
        assert_eq!(o.at, time("2026-06-10T17:00:00Z"));
        assert_eq!(o.snapshot.as_ref().unwrap().state, "closed");
    }

    #[test]
    fn a_deleted_milestone_is_dated_at_receipt() {
        let d = relevant_delivery("milestone", &own_fixture("milestone/deleted.json"));
        assert!(d.dated_at_receipt);
        let o = &d.observations[0];
        assert_eq!(o.target, "Codertocat/Hello-World#milestone:1");
        assert_eq!(
            o.event,
            K::MilestoneChanged {
                milestone: "v1.0".into(),
                action: "deleted".into()
            }
        );
    }

    #[test]
    fn shared_milestone_payloads_normalize() {
        let Some(files) = shared_fixtures_of("milestone") else {
            return;
        };
        for (path, body) in files {
            let d = relevant_delivery("milestone", &body);
            assert_eq!(d.observations.len(), 1, "{}", path.display());
            assert!(
                matches!(&d.observations[0].event, K::MilestoneChanged { milestone, .. } if milestone == "v1.0"),
                "{}",
                path.display()
            );
        }
    }
}
