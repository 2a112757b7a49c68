//! Signed-in sessions, in memory: id → who, their GitHub user token, when the
//! session ends, and their repository list with when it was fetched. The
//! browser holds only the signed session id (the token never leaves the
//! server). Bounded: at most `MAX_SESSIONS`; expired ones go first, then the
//! oldest. A restart signs everybody out.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Most sessions kept at once.
pub const MAX_SESSIONS: usize = 10_000;

/// What a viewer can see: installation id → its repositories they can see.
pub type ViewerScope = BTreeMap<u64, BTreeSet<String>>;

/// How a viewer signed in, which decides what they may see.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionKind {
    /// Sign-in with GitHub: the repositories their account can see.
    GitHub,
    /// The one-time local link of `demo --serve` (`/auth/local`): everything
    /// this server holds, no GitHub account behind it.
    Local,
}

/// One signed-in viewer.
#[derive(Clone)]
pub struct Session {
    pub id: String,
    pub kind: SessionKind,
    pub login: String,
    pub user_id: u64,
    /// The user-to-server token (`ghu_…`).
    pub token: String,
    pub expires: Instant,
    scope: Option<(ViewerScope, Instant)>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("login", &self.login)
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
pub struct Sessions {
    map: Mutex<HashMap<String, Session>>,
}

impl Sessions {
    /// Open a session lasting `ttl`; returns its id.
    pub fn open(&self, login: String, user_id: u64, token: String, ttl: Duration) -> String {
        self.insert(SessionKind::GitHub, login, user_id, token, ttl)
    }

    /// Open a local viewer's session (`SessionKind::Local`) lasting `ttl`.
    pub fn open_local(&self, ttl: Duration) -> String {
        self.insert(SessionKind::Local, "local".into(), 0, String::new(), ttl)
    }

    fn insert(
        &self,
        kind: SessionKind,
        login: String,
        user_id: u64,
        token: String,
        ttl: Duration,
    ) -> String {
        let id = super::signed::random_token();
        let now = Instant::now();
        let mut map = self.map.lock().expect("sessions lock");
        map.retain(|_, s| s.expires > now);
        while map.len() >= MAX_SESSIONS {
            let oldest = map
                .iter()
                .min_by_key(|(_, s)| s.expires)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => map.remove(&k),
                None => break,
            };
        }
        map.insert(
            id.clone(),
            Session {
                id: id.clone(),
                kind,
                login,
                user_id,
                token,
                expires: now + ttl,
                scope: None,
            },
        );
        id
    }

    /// A live session.
    pub fn get(&self, id: &str) -> Option<Session> {
        let mut map = self.map.lock().expect("sessions lock");
        match map.get(id) {
            Some(s) if s.expires > Instant::now() => Some(s.clone()),
            Some(_) => {
                map.remove(id);
                None
            }
            None => None,
        }
    }

    pub fn remove(&self, id: &str) {
        self.map.lock().expect("sessions lock").remove(id);
    }

    /// The cached repository list, if fetched less than `ttl` ago.
    pub fn fresh_scope(&self, id: &str, ttl: Duration) -> Option<ViewerScope> {
        let map = self.map.lock().expect("sessions lock");
        let (repos, at) = map.get(id)?.scope.as_ref()?;
        (at.elapsed() < ttl).then(|| repos.clone())
    }

    pub fn set_scope(&self, id: &str, repos: ViewerScope) {
        if let Some(s) = self.map.lock().expect("sessions lock").get_mut(id) {
            s.scope = Some((repos, Instant::now()));
        }
    }

    pub fn len(&self) -> usize {
        self.map.lock().expect("sessions lock").len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_expire_and_their_scope_goes_stale() {
        let s = Sessions::default();
        let id = s.open("alice".into(), 1, "ghu_a".into(), Duration::from_secs(60));
        assert_eq!(s.get(&id).unwrap().login, "alice");
        assert!(s.fresh_scope(&id, Duration::from_secs(60)).is_none());
        s.set_scope(&id, [(1, ["acme/a".to_string()].into())].into());
        assert_eq!(
            s.fresh_scope(&id, Duration::from_secs(60)).unwrap().len(),
            1
        );
        assert!(s.fresh_scope(&id, Duration::ZERO).is_none());
        let gone = s.open("bob".into(), 2, "ghu_b".into(), Duration::ZERO);
        assert!(s.get(&gone).is_none());
        s.remove(&id);
        assert!(s.get(&id).is_none());
        assert!(s.is_empty());
        let local = s.open_local(Duration::from_secs(60));
        assert_eq!(s.get(&local).unwrap().kind, SessionKind::Local);
    }
}
