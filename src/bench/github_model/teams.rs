//! The owner's teams as GitHub renders them (`world::teams` holds the
//! state): the `team` object (REST's `team`/`team-simple`, the webhooks'
//! `webhooks_team`), the `membership.added`/`removed` delivery, and REST's
//! `GET /orgs/{org}/teams/{team_slug}/memberships/{username}` (the schema
//! `team-membership`: `url`, `role`, `state`; 404 for a non-member, as for
//! a team the caller cannot see).

use serde_json::{json, Value};

use super::history::Actor;
use super::objects;
use super::world::World;

/// The organization the teams belong to: the repository's first owner
/// (a team does not move with a transferred repository).
pub fn org(w: &World) -> &str {
    w.first_name().split('/').next().unwrap_or_default()
}

/// A stable id of team `slug`.
fn id(slug: &str) -> u64 {
    3_000_000
        + slug
            .bytes()
            .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64))
            % 1_000_000
}

/// GitHub's `team-simple` (and the webhooks' team) for `slug`.
pub fn team(w: &World, slug: &str) -> Value {
    let (org, id) = (org(w), id(slug));
    json!({"id": id, "node_id": format!("T_kwDO{id}"), "name": slug, "slug": slug,
           "description": null, "privacy": "closed", "notification_setting": "notifications_enabled",
           "permission": "pull", "parent": null, "type": "organization",
           "url": format!("https://api.github.com/organizations/148820031/team/{id}"),
           "html_url": format!("https://github.com/orgs/{org}/teams/{slug}"),
           "members_url": format!("https://api.github.com/organizations/148820031/team/{id}/members{{/member}}"),
           "repositories_url": format!("https://api.github.com/organizations/148820031/team/{id}/repos")})
}

/// `membership.added`/`removed` of `login` in `slug`: scope `team`, the
/// member, the team, the organization (no repository: `webhooks::envelope`).
pub fn delivery(w: &World, slug: &str, login: &str) -> Vec<(String, Value)> {
    let member = w.teams.is_member(slug, login);
    let action = if member { "added" } else { "removed" };
    let who = if login.ends_with("[bot]") {
        Actor::bot(login)
    } else {
        Actor::human(login)
    };
    vec![(
        "membership".into(),
        json!({"action": action, "scope": "team", "member": objects::user(&who),
               "team": team(w, slug)}),
    )]
}

/// `GET /orgs/{org}/teams/{slug}/memberships/{login}` as of the world:
/// `None` (404) unless `login` is a member of an existing team of `org`.
pub fn membership(w: &World, path: &str) -> Option<Value> {
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let ["orgs", o, "teams", slug, "memberships", login] = segs.as_slice() else {
        return None;
    };
    let member =
        o.eq_ignore_ascii_case(org(w)) && w.teams.exists(slug) && w.teams.is_member(slug, login);
    member.then(|| {
        json!({"url": format!("https://api.github.com/organizations/148820031/team/{}/memberships/{login}", id(slug)),
               "role": "member", "state": "active"})
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::github_model::history::{Fact, History};

    #[test]
    fn the_memberships_answer_follows_the_deliveries() {
        let t0: chrono::DateTime<chrono::Utc> = "2026-10-01T12:00:00Z".parse().unwrap();
        let mut h = History::new("acme/widgets", 1);
        let add = |login: &str, member| Fact::TeamMembership {
            team: "reviewers".into(),
            login: login.into(),
            member,
        };
        h.push(t0, &Actor::human("alice"), add("carol", true));
        h.push(
            t0 + chrono::Duration::hours(1),
            &Actor::human("alice"),
            add("bob", false),
        );
        let path = |l: &str| format!("orgs/acme/teams/reviewers/memberships/{l}");
        let before = World::at(&h, t0 - chrono::Duration::hours(1));
        assert!(membership(&before, &path("bob")).is_some());
        assert!(membership(&before, &path("carol")).is_none());
        let after = World::at(&h, t0 + chrono::Duration::hours(2));
        assert_eq!(
            membership(&after, &path("carol")).unwrap()["state"],
            "active"
        );
        assert!(membership(&after, &path("bob")).is_none());
        assert!(membership(&after, "orgs/acme/teams/other/memberships/carol").is_none());
        let d = crate::bench::github_model::webhooks::deliveries(&h);
        let actions: Vec<(&str, &str, &str)> = d
            .iter()
            .map(|d| {
                (
                    d.event.as_str(),
                    d.body["action"].as_str().unwrap(),
                    d.body["member"]["login"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            actions,
            [
                ("membership", "added", "carol"),
                ("membership", "removed", "bob")
            ]
        );
        assert!(d[0].body.get("repository").is_none());
        assert_eq!(d[0].body["team"]["slug"], "reviewers");
        assert_eq!(d[0].body["sender"]["login"], "alice");
    }
}
