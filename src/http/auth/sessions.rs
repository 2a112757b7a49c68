//! Signed-in sessions, in the store (`store::web_state`, space `Session`), so
//! every replica knows them and a restart signs nobody out. A session is
//! filed under the SHA-256 of its id (the browser holds only the signed id;
//! the store never holds a value a cookie could be made from), with who
//! signed in, how, their GitHub user token (which never leaves the server)
//! and its expiry.
//!
//! Bounded twice: one account keeps at most `PER_ACCOUNT` sessions (its
//! oldest go first), and the server at most `MAX_SESSIONS` (expired ones
//! swept first, then the oldest of all). Since one account holds at most
//! `PER_ACCOUNT`, no single account can push another viewer's session out.
//!
//! What a viewer may see (their repositories on GitHub) is cached in memory
//! per replica for `SCOPE_TTL` and while the access epoch stays
//! (`access`): a cache, bounded like the sessions. An account's sessions
//! can all be ended at once (`end_account`: "sign out everywhere", or an
//! offboarding webhook).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use chrono::Utc;
use serde::{Deserialize, Serialize};

use super::signed;
use crate::store::{Result, Space, Store};

/// Most sessions kept at once.
pub(crate) const MAX_SESSIONS: usize = 10_000;
/// Most sessions one account keeps at once (browsers, devices).
pub const PER_ACCOUNT: usize = 20;
/// Expired sessions swept per sign-in.
const SWEEP: usize = 64;

/// What a viewer can see: installation id → its repositories they can see.
pub(crate) type ViewerScope = BTreeMap<u64, BTreeSet<String>>;

/// How a viewer signed in, which decides what they may see.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SessionKind {
    /// Sign-in with GitHub: the repositories their account can see.
    #[serde(rename = "github")]
    GitHub,
    /// The one-time local link of `demo --serve` (`/auth/local`): everything
    /// this server holds, no GitHub account behind it.
    Local,
    /// Signed in with the `API_TOKEN` (`/auth/login`): the operator, who
    /// sees everything, as the token does on the API.
    Operator,
}

impl SessionKind {
    /// True for a session that sees every repository.
    pub(crate) fn sees_everything(self) -> bool {
        matches!(self, SessionKind::Local | SessionKind::Operator)
    }
}

/// A session as stored.
#[derive(Clone, Serialize, Deserialize)]
struct Stored {
    kind: SessionKind,
    login: String,
    user_id: u64,
    /// The user-to-server token (`ghu_…`); for the operator and the local
    /// viewer, the digest of the token or key they signed in with.
    #[serde(default)]
    token: String,
    created_ms: i64,
}

/// One signed-in viewer.
#[derive(Clone)]
pub(crate) struct Session {
    /// The id the browser holds (signed in its cookie).
    pub id: String,
    pub kind: SessionKind,
    pub login: String,
    pub user_id: u64,
    /// The user-to-server token (`ghu_…`); for the operator and the local
    /// viewer, the digest of the token or key they signed in with (a session
    /// ends when that token or key changes: `Auth::session`).
    pub token: String,
}

impl Session {
    /// The account the session belongs to (the group its cap counts in).
    pub(crate) fn account(&self) -> String {
        account(self.kind, self.user_id)
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("login", &self.login)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

/// The account a session counts against: a GitHub account by its id (a
/// login can be renamed), the operator, or the local viewer.
pub(crate) fn account(kind: SessionKind, user_id: u64) -> String {
    match kind {
        SessionKind::GitHub => format!("github:{user_id}"),
        SessionKind::Local => "local".to_string(),
        SessionKind::Operator => "operator".to_string(),
    }
}

/// Who signs in.
#[derive(Clone, Debug)]
pub(crate) struct Who {
    pub kind: SessionKind,
    pub login: String,
    pub user_id: u64,
    pub token: String,
}

impl Who {
    pub(crate) fn github(login: String, user_id: u64, token: String) -> Who {
        Who {
            kind: SessionKind::GitHub,
            login,
            user_id,
            token,
        }
    }

    /// The demo's local viewer, signed in with the key `key`.
    pub(crate) fn local(key: &str) -> Who {
        Who {
            kind: SessionKind::Local,
            login: "local".into(),
            user_id: 0,
            token: signed::digest(key),
        }
    }

    /// The operator, signed in with the `API_TOKEN` `api_token`.
    pub(crate) fn operator(api_token: &str) -> Who {
        Who {
            kind: SessionKind::Operator,
            login: "operator".into(),
            user_id: 0,
            token: signed::digest(api_token),
        }
    }
}

/// A cached answer of what a viewer sees.
type Cached = (ViewerScope, Instant, u64);

pub(crate) struct Sessions {
    store: Store,
    /// Session digest → what the viewer sees, when it was asked, and the
    /// access epoch it was asked under (`access::epoch`).
    scopes: Mutex<HashMap<String, Cached>>,
    /// The caps: per account, and of all (`PER_ACCOUNT`, `MAX_SESSIONS`).
    per_account: usize,
    max: usize,
}

impl Sessions {
    pub(crate) fn new(store: Store) -> Sessions {
        Sessions::with_caps(store, PER_ACCOUNT, MAX_SESSIONS)
    }

    /// Sessions kept under other caps (tests).
    pub(crate) fn with_caps(store: Store, per_account: usize, max: usize) -> Sessions {
        Sessions {
            store,
            scopes: Mutex::default(),
            per_account: per_account.max(1),
            max: max.max(1),
        }
    }

    /// Open a session for `who` lasting `ttl`; returns its id. Makes room
    /// first: expired sessions, then `who`'s account's oldest beyond
    /// `per_account - 1`, then the oldest of all beyond `max - 1`.
    pub(crate) fn open(&self, who: Who, ttl: Duration) -> Result<String> {
        let now = Utc::now();
        let group = account(who.kind, who.user_id);
        self.store.sweep_expiring(Space::Session, now, SWEEP)?;
        // The account's oldest beyond its cap, then the oldest of all
        // beyond the server's: removed in the same commit as the new one.
        let mine =
            self.store
                .expiring_ids(Space::Session, Some(&group), self.per_account + SWEEP)?;
        let account_over = (mine.len() + 1).saturating_sub(self.per_account);
        let mut evict: Vec<String> = mine[..account_over].to_vec();
        let all = self.store.count_expiring(Space::Session, self.max + 1)?;
        let global_over = (all + 1).saturating_sub(account_over + self.max);
        if global_over > 0 {
            let oldest =
                self.store
                    .expiring_ids(Space::Session, None, global_over + account_over)?;
            for old in oldest {
                if evict.len() >= account_over + global_over {
                    break;
                }
                if !evict.contains(&old) {
                    evict.push(old);
                }
            }
        }
        {
            let mut scopes = self.scopes.lock().expect("scopes lock");
            for old in &evict {
                scopes.remove(old);
            }
        }
        let id = signed::random_token();
        let stored = Stored {
            kind: who.kind,
            login: who.login,
            user_id: who.user_id,
            token: who.token,
            created_ms: now.timestamp_millis(),
        };
        let expires = now + chrono::Duration::from_std(ttl).unwrap_or(chrono::Duration::zero());
        self.store.put_expiring_evicting(
            Space::Session,
            &signed::digest(&id),
            Some(&group),
            expires,
            &stored,
            &evict,
        )?;
        Ok(id)
    }

    /// The live session with id `id`.
    pub(crate) fn get(&self, id: &str) -> Result<Option<Session>> {
        let found =
            self.store
                .expiring::<Stored>(Space::Session, &signed::digest(id), Utc::now())?;
        Ok(found.map(|s| Session {
            id: id.to_string(),
            kind: s.value.kind,
            login: s.value.login,
            user_id: s.value.user_id,
            token: s.value.token,
        }))
    }

    /// The GitHub user token of the live session filed under `digest`.
    pub(crate) fn github_token(&self, digest: &str) -> Result<Option<String>> {
        let found = self
            .store
            .expiring::<Stored>(Space::Session, digest, Utc::now())?;
        Ok(found
            .map(|s| s.value)
            .filter(|s| s.kind == SessionKind::GitHub && !s.token.is_empty())
            .map(|s| s.token))
    }

    /// End the session with id `id` (on every replica).
    pub(crate) fn remove(&self, id: &str) -> Result<()> {
        self.forget(&signed::digest(id))
    }

    fn forget(&self, digest: &str) -> Result<()> {
        self.scopes.lock().expect("scopes lock").remove(digest);
        self.store.remove_expiring(Space::Session, digest)?;
        Ok(())
    }

    /// How many sessions `account` holds.
    #[cfg(test)]
    pub(crate) fn count_of(&self, account: &str) -> Result<usize> {
        Ok(self
            .store
            .expiring_ids(Space::Session, Some(account), MAX_SESSIONS)?
            .len())
    }

    /// The cached repository list, if asked less than `ttl` ago under the
    /// access epoch `epoch`.
    pub(crate) fn fresh_scope(&self, id: &str, ttl: Duration, epoch: u64) -> Option<ViewerScope> {
        let scopes = self.scopes.lock().expect("scopes lock");
        let (repos, at, asked_under) = scopes.get(&signed::digest(id))?;
        (at.elapsed() < ttl && *asked_under == epoch).then(|| repos.clone())
    }

    /// Cache what session `id` may see (dropping stale entries when the
    /// cache outgrows the sessions it could belong to).
    pub(crate) fn set_scope(&self, id: &str, repos: ViewerScope, ttl: Duration, epoch: u64) {
        let mut scopes = self.scopes.lock().expect("scopes lock");
        if scopes.len() >= self.max {
            scopes.retain(|_, (_, at, _)| at.elapsed() < ttl);
            if scopes.len() >= self.max {
                scopes.clear();
            }
        }
        scopes.insert(signed::digest(id), (repos, Instant::now(), epoch));
    }

    /// End every session of `account` ("sign out everywhere"); how many.
    pub(crate) fn end_account(&self, account: &str) -> Result<usize> {
        let digests = self
            .store
            .expiring_ids(Space::Session, Some(account), MAX_SESSIONS)?;
        for digest in &digests {
            self.forget(digest)?;
        }
        Ok(digests.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sessions() -> (tempfile::TempDir, Sessions) {
        let (dir, store) = super::super::test_store();
        (dir, Sessions::new(store))
    }

    /// Sessions with one of bob's open: the store's folder, the sessions,
    /// their time to live and bob's session.
    fn with_bob() -> (tempfile::TempDir, Sessions, Duration, String) {
        let (d, s) = sessions();
        let ttl = Duration::from_secs(600);
        let bob = s
            .open(Who::github("bob".into(), 2, "ghu_b".into()), ttl)
            .unwrap();
        (d, s, ttl, bob)
    }

    fn alice() -> Who {
        Who::github("alice".into(), 1, "ghu_a".into())
    }

    #[test]
    fn sessions_expire_and_their_scope_goes_stale() {
        let (_d, s) = sessions();
        let ttl = Duration::from_secs(60);
        let id = s.open(alice(), ttl).unwrap();
        assert_eq!(s.get(&id).unwrap().unwrap().login, "alice");
        assert!(s.fresh_scope(&id, ttl, 0).is_none());
        s.set_scope(&id, [(1, ["acme/a".to_string()].into())].into(), ttl, 0);
        assert_eq!(s.fresh_scope(&id, ttl, 0).unwrap().len(), 1);
        assert!(s.fresh_scope(&id, Duration::ZERO, 0).is_none());
        assert!(s.fresh_scope(&id, ttl, 1).is_none(), "another access epoch");
        let gone = s
            .open(Who::github("bob".into(), 2, "ghu_b".into()), Duration::ZERO)
            .unwrap();
        assert!(s.get(&gone).unwrap().is_none());
        s.remove(&id).unwrap();
        assert!(s.get(&id).unwrap().is_none());
        assert!(s.fresh_scope(&id, ttl, 0).is_none());
        let local = s.open(Who::local("k"), ttl).unwrap();
        assert_eq!(s.get(&local).unwrap().unwrap().kind, SessionKind::Local);
        assert!(s.get("no-such-session").unwrap().is_none());
    }

    #[test]
    fn one_account_keeps_its_newest_sessions_and_never_evicts_another() {
        let (_d, s, ttl, bob) = with_bob();
        let ids: Vec<String> = (0..PER_ACCOUNT + 5)
            .map(|_| s.open(alice(), ttl).unwrap())
            .collect();
        assert_eq!(s.count_of("github:1").unwrap(), PER_ACCOUNT);
        for old in &ids[..5] {
            assert!(s.get(old).unwrap().is_none(), "the oldest go first");
        }
        for new in &ids[5..] {
            assert!(s.get(new).unwrap().is_some());
        }
        assert!(s.get(&bob).unwrap().is_some());
    }

    #[test]
    fn ten_thousand_sign_ins_of_one_github_account_leave_another_alive() {
        let (_d, s, ttl, bob) = with_bob();
        let mut last = String::new();
        for _ in 0..10_100 {
            last = s.open(alice(), ttl).unwrap();
        }
        assert!(s.get(&bob).unwrap().is_some());
        assert!(s.get(&last).unwrap().is_some());
        assert_eq!(s.count_of("github:1").unwrap(), PER_ACCOUNT);
        assert_eq!(s.count_of("github:2").unwrap(), 1);
    }

    #[test]
    fn at_the_global_cap_the_oldest_of_all_go_first() {
        let (_dir, store) = super::super::test_store();
        let s = Sessions::with_caps(store, 3, 10);
        let ttl = Duration::from_secs(600);
        let ids: Vec<String> = (0..15)
            .map(|n| {
                s.open(Who::github(format!("u{n}"), n, String::new()), ttl)
                    .unwrap()
            })
            .collect();
        for (n, id) in ids.iter().enumerate() {
            assert_eq!(s.get(id).unwrap().is_some(), n >= 5, "{n}");
        }
        // Expired sessions are swept before anyone live is pushed out.
        let (_d2, s) = sessions();
        let s = Sessions::with_caps(s.store.clone(), 3, 4);
        let keep = s.open(alice(), ttl).unwrap();
        for n in 0..3 {
            s.open(
                Who::github(format!("gone{n}"), 10 + n, String::new()),
                Duration::ZERO,
            )
            .unwrap();
        }
        let new = s.open(Who::local("k"), ttl).unwrap();
        assert!(s.get(&keep).unwrap().is_some());
        assert!(s.get(&new).unwrap().is_some());
    }
}
