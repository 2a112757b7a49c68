//! `membership` events (`added`, `removed`, scope `team`): a person added
//! to or removed from an organization's team. They matter to
//! `add_reviewer`'s team requests: a team member's review counts only if
//! they were a member when they reviewed (issue 44, item 4;
//! `judge::evaluate::review::reviewers`).
//!
//! Filed under the team's key (`team_key(org, slug)`), which an
//! `add_reviewer` output requesting that team watches
//! (`ExecutionRecord::extra_watch_keys`), as `TeamMember` with
//! `changed: true`. The payload carries no time of its own (GitHub's
//! description of `membership` has none): the fact is dated when the
//! delivery is received (`NormalizedDelivery::dated_at_receipt`).
//! Organization-scoped removals (`scope: organization`) name no team and are
//! left to `http::auth::access`, which ends the member's sessions.

use serde::Deserialize;

use super::payload::{Team, User};
use super::{Ctx, Fact, NormResult, Output};
use crate::model::target::team_key;
use crate::model::ObservationKind as K;

/// The events this family normalizes.
pub(super) const EVENTS: super::Events = &[("membership", normalize)];

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Body {
    scope: Option<String>,
    member: Option<User>,
    team: Option<Team>,
    organization: Option<User>,
}

fn normalize(ctx: &Ctx) -> NormResult {
    let body: Body = super::payload::shaped(ctx)?;
    if body.scope.as_deref().is_some_and(|s| s != "team") {
        return Err("`membership` of the organization, not a team".into());
    }
    let member = match ctx.action() {
        "added" => true,
        "removed" => false,
        other => return Err(format!("`membership.{other}` is not read")),
    };
    let slug = body
        .team
        .and_then(|t| t.slug)
        .filter(|s| !s.is_empty())
        .ok_or("`membership` names no team slug (a deleted team)")?;
    let login = body
        .member
        .and_then(|m| m.login)
        .filter(|l| !l.is_empty())
        .ok_or("`membership` names no member")?;
    let org = body
        .organization
        .and_then(|o| o.login)
        .unwrap_or_else(|| ctx.repo.split('/').next().unwrap_or(ctx.repo).to_string());
    let mut out = Output::default();
    out.observations.push(Fact {
        at: super::UNDATED,
        target: team_key(&org, &slug),
        kind: K::TeamMember {
            org,
            team: slug.to_ascii_lowercase(),
            login,
            member,
            changed: true,
        },
        snapshot: None,
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::ingest::webhook::{normalize, Normalized};
    use crate::model::ObservationKind as K;
    use serde_json::json;

    fn delivery(action: &str, scope: &str, team: serde_json::Value) -> Normalized {
        let body = json!({"action": action, "scope": scope,
            "member": {"login": "frank", "id": 7, "type": "User"},
            "sender": {"login": "alice", "id": 8, "type": "User"},
            "team": team,
            "organization": {"login": "acme", "id": 9},
            "installation": {"id": 42}});
        normalize("membership", "d-1", body.to_string().as_bytes()).expect("normalized")
    }

    #[test]
    fn a_team_membership_change_is_filed_under_the_team_dated_at_receipt() {
        for (action, member) in [("added", true), ("removed", false)] {
            let Normalized::Relevant(d) =
                delivery(action, "team", json!({"slug": "Infra", "id": 3}))
            else {
                panic!("{action} ignored");
            };
            assert!(d.dated_at_receipt);
            assert_eq!(d.repo.as_deref(), Some("acme"));
            let o = &d.observations[0];
            assert_eq!(o.target, "acme#team:infra");
            assert_eq!(o.actor.as_ref().map(|a| a.login.as_str()), Some("alice"));
            assert_eq!(
                o.event,
                K::TeamMember {
                    org: "acme".into(),
                    team: "infra".into(),
                    login: "frank".into(),
                    member,
                    changed: true
                }
            );
        }
    }

    #[test]
    fn an_organization_scope_or_a_deleted_team_is_ignored() {
        assert!(matches!(
            delivery("removed", "organization", json!(null)),
            Normalized::Ignored { .. }
        ));
        assert!(matches!(
            delivery(
                "removed",
                "team",
                json!({"id": 3, "name": "gone", "deleted": true})
            ),
            Normalized::Ignored { .. }
        ));
    }
}
