//! Access that ends when GitHub says so. Four signed deliveries end a
//! viewer's or a token's access at once, on every replica:
//! - `organization` `member_removed` (someone left the organization),
//! - `membership` `removed` (someone left a team),
//! - `installation_repositories` `removed` (repositories left the App),
//! - `installation` `deleted` (the App was uninstalled).
//!
//! Each changes the **access epoch**, a value kept in the store (named
//! secret `access-epoch`). Every cached answer about who sees what carries
//! the epoch it was made under — a session's repositories (`Sessions`'s
//! cache), an account's access as last seen (`tokens::note_access`), an
//! issuer's re-check (`issuer`) — and is stale once the epoch moves: the
//! next read asks GitHub again (with the viewer's session, else with the
//! installation token). A member removed also has every session ended (they
//! sign in again, if GitHub still lets them) and every read token of theirs
//! in that organization's installation re-checked at its next read.

use serde::Deserialize;

use super::sessions::{account, SessionKind, Sessions};
use crate::store::{Result, Store};

/// Name of the access epoch in the store.
const EPOCH: &str = "access-epoch";

/// The access epoch now (0 before any offboarding delivery).
pub fn epoch(store: &Store) -> Result<u64> {
    Ok(store
        .secret(EPOCH)?
        .and_then(|v| v.as_slice().try_into().ok().map(u64::from_be_bytes))
        .unwrap_or(0))
}

/// Move the access epoch: every cached answer about access is stale.
pub(crate) fn bump(store: &Store) -> Result<()> {
    let next = crate::github::client::new_mark();
    store.put_secret(EPOCH, &next.to_be_bytes())
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Body {
    action: Option<String>,
    /// `organization.member_removed`: the membership that ended.
    membership: Option<Membership>,
    /// `membership.removed`: the team member.
    member: Option<User>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Membership {
    user: Option<User>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct User {
    id: Option<u64>,
    login: Option<String>,
}

/// What an offboarding delivery ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// Someone's access (the account whose sessions end, if named).
    Member { user_id: Option<u64>, login: String },
    /// Repositories' or an installation's access, for everyone.
    Installation,
}

/// The access a delivery of `event` ends, if it is one of the four.
pub fn ending(event: &str, body: &[u8]) -> Option<Ending> {
    // Checked on the ack path: every other event is passed by its name,
    // without parsing its body a second time.
    const EVENTS: [&str; 4] = [
        "organization",
        "membership",
        "installation_repositories",
        "installation",
    ];
    if !EVENTS.contains(&event) {
        return None;
    }
    let body: Body = serde_json::from_slice(body).ok()?;
    let member = |u: Option<User>| {
        let u = u.unwrap_or_default();
        Ending::Member {
            user_id: u.id,
            login: u.login.unwrap_or_default(),
        }
    };
    match (event, body.action.as_deref()?) {
        ("organization", "member_removed") => Some(member(body.membership.and_then(|m| m.user))),
        ("membership", "removed") => Some(member(body.member)),
        ("installation_repositories", "removed") | ("installation", "deleted") => {
            Some(Ending::Installation)
        }
        _ => None,
    }
}

/// End the access `ending` describes: the epoch moves, and a member
/// loses their sessions. Returns how many sessions ended.
pub fn end(store: &Store, sessions: &Sessions, ending: &Ending) -> Result<usize> {
    bump(store)?;
    let Ending::Member {
        user_id: Some(id), ..
    } = ending
    else {
        return Ok(0);
    };
    sessions.end_account(&account(SessionKind::GitHub, *id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn of(event: &str, body: serde_json::Value) -> Option<Ending> {
        ending(event, body.to_string().as_bytes())
    }

    #[test]
    fn the_four_deliveries_end_access_and_no_other() {
        let alice = Some(Ending::Member {
            user_id: Some(7),
            login: "alice".into(),
        });
        let user = json!({"id": 7, "login": "alice"});
        assert_eq!(
            of(
                "organization",
                json!({"action": "member_removed", "membership": {"user": user}})
            ),
            alice
        );
        assert_eq!(
            of(
                "membership",
                json!({"action": "removed", "scope": "team", "member": user})
            ),
            alice
        );
        for (event, action) in [
            ("installation_repositories", "removed"),
            ("installation", "deleted"),
        ] {
            assert_eq!(
                of(event, json!({"action": action})),
                Some(Ending::Installation)
            );
        }
        for (event, action) in [
            ("organization", "member_added"),
            ("membership", "added"),
            ("installation_repositories", "added"),
            ("installation", "created"),
            ("issues", "deleted"),
        ] {
            assert_eq!(of(event, json!({"action": action})), None, "{event}");
        }
        assert_eq!(ending("installation", b"not json"), None);
    }

    #[test]
    fn the_epoch_moves_and_a_member_loses_their_sessions() {
        let (_dir, store) = super::super::test_store();
        assert_eq!(epoch(&store).unwrap(), 0);
        let sessions = Sessions::new(store.clone());
        let ttl = std::time::Duration::from_secs(60);
        let who =
            |login: &str, id| super::super::sessions::Who::github(login.into(), id, "ghu_x".into());
        let a = sessions.open(who("alice", 7), ttl).unwrap();
        let b = sessions.open(who("bob", 8), ttl).unwrap();
        let alice = of(
            "organization",
            json!({"action": "member_removed", "membership": {"user": {"id": 7, "login": "alice"}}}),
        )
        .unwrap();
        assert_eq!(end(&store, &sessions, &alice).unwrap(), 1);
        let first = epoch(&store).unwrap();
        assert_ne!(first, 0);
        assert!(sessions.get(&a).unwrap().is_none());
        assert!(sessions.get(&b).unwrap().is_some());
        assert_eq!(end(&store, &sessions, &Ending::Installation).unwrap(), 0);
        assert_ne!(epoch(&store).unwrap(), first);
        assert!(sessions.get(&b).unwrap().is_some());
    }
}
