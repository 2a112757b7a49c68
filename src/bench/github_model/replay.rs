//! The histories the model serves: set per repository, replayed at the
//! model's clock (the App's manual clock in tests) into the world the REST
//! and GraphQL answers are rendered from. An explicit answer set with
//! `set_api` wins over the history's (a test pinning one odd answer).

use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::history::History;
use super::world::World;
use super::{Fake, FakeGitHub};
use crate::model::clock::Clock;

impl FakeGitHub {
    /// Serve `history` for its repository (replacing an earlier one).
    pub fn set_history(&self, history: History) {
        let mut inner = self.fake.lock();
        inner.world_cache = None;
        inner
            .histories
            .insert(history.repo.to_ascii_lowercase(), history);
    }

    /// Answer as of `clock` (default: the wall clock).
    pub fn set_clock(&self, clock: Clock) {
        self.fake.lock().clock = Some(clock);
    }

    /// The world of `repo` as of the model's clock.
    pub fn world(&self, repo: &str) -> Option<Arc<World>> {
        self.fake.world(repo)
    }
}

impl Fake {
    pub(super) fn now(&self) -> DateTime<Utc> {
        self.lock().clock.as_ref().map_or_else(Utc::now, Clock::now)
    }

    /// The world of `repo` (`owner/name`) now, when a history is set for
    /// it (the last one replayed is kept while the clock stands still).
    pub(super) fn world(&self, repo: &str) -> Option<Arc<World>> {
        let now = self.now();
        let (repo, _) = self.named(repo)?;
        if self.lock().histories.get(&repo)?.deleted_by(now) {
            // A deleted repository is not found (`Fact::DeleteRepo`).
            return None;
        }
        self.world_kept(&repo)
    }

    /// The world of the history keyed `repo` now, deleted or not (an
    /// issue transferred away before the deletion lives on where it went).
    pub(super) fn world_kept(&self, repo: &str) -> Option<Arc<World>> {
        let now = self.now();
        let repo = repo.to_string();
        let mut inner = self.lock();
        if let Some((r, at, w)) = &inner.world_cache {
            if *r == repo && *at == now {
                return Some(w.clone());
            }
        }
        let history = inner.histories.get(&repo)?;
        let world = Arc::new(World::at(history, now));
        inner.world_cache = Some((repo, now, world.clone()));
        Some(world)
    }

    /// The history a repository name stands for (any name it had up to
    /// now, `Fact::RenameRepo`): its key and the repository's name now.
    pub(super) fn named(&self, repo: &str) -> Option<(String, String)> {
        let now = self.now();
        let key = repo.to_ascii_lowercase();
        let inner = self.lock();
        if let Some(h) = inner.histories.get(&key) {
            return Some((key, h.name_at(now)));
        }
        inner.histories.iter().find_map(|(key, h)| {
            let mut names = h.names_at(now);
            let now_name = names.pop()?;
            now_name
                .eq_ignore_ascii_case(repo)
                .then(|| (key.clone(), now_name.clone()))
                .or_else(|| {
                    names
                        .iter()
                        .any(|n| n.eq_ignore_ascii_case(repo))
                        .then(|| (key.clone(), now_name))
                })
        })
    }

    /// Every repository with a history.
    pub(super) fn history_repos(&self) -> Vec<String> {
        self.lock().histories.keys().cloned().collect()
    }
}

impl Fake {
    /// The runs set with `add_run` and those of the histories, as of now.
    pub(super) fn all_runs(&self) -> Vec<super::runs::Run> {
        let mut all = self.lock().runs.all.clone();
        for repo in self.history_repos() {
            let Some(w) = self.world(&repo) else { continue };
            all.extend(w.runs.values().map(|r| super::runs::Run {
                id: r.id,
                repo: w.repo.clone(),
                path: r.path.clone(),
                status: if r.conclusion.is_some() {
                    "completed".into()
                } else {
                    "queued".into()
                },
                created_at: r.created_at,
                event: r.event.clone(),
                conclusion: r.conclusion.clone(),
                updated_at: r.updated_at,
            }));
        }
        all
    }

    /// The artifacts set with `add_artifact` and those of the histories'
    /// completed runs (ids from the run's: `HISTORY_ARTIFACTS + run × 10 + i`).
    pub(super) fn all_artifacts(&self) -> Vec<super::artifacts::Artifact> {
        let mut all = self.lock().artifacts.all.clone();
        for repo in self.history_repos() {
            let Some(w) = self.world(&repo) else { continue };
            for r in w.runs.values() {
                for (i, (name, zip)) in r.artifacts.iter().enumerate() {
                    all.push(super::artifacts::Artifact {
                        id: HISTORY_ARTIFACTS + r.id * 10 + i as u64,
                        repo: w.repo.clone(),
                        run_id: r.id,
                        name: name.clone(),
                        expired: false,
                        zip: zip.clone(),
                    });
                }
            }
        }
        all
    }
}

/// Where the ids of the histories' artifacts start.
pub(crate) const HISTORY_ARTIFACTS: u64 = 9_000_000_000;
