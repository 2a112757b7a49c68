//! Tenancy, the one rule every path that registers an output or reads for
//! it obeys (docs/auth.md, "Tenancy"): **every output belongs to exactly one
//! installation of the App, and everything it reads — its own repository,
//! its target, the observations filed under them, its check run — lies in
//! repositories that installation covers.**
//!
//! The output's installation is its run's: the installation the run's
//! repository is mapped to (`installation_of`, kept from `installation`
//! deliveries, `installation_repositories` deliveries and the
//! `installation.id` every other delivery carries). Then:
//!
//! - **The installation is known**: its repository list decides, deny by
//!   default. A repository the App has not learned to be under that very
//!   installation is outside it, whether it is mapped to another
//!   installation or to none.
//! - **No installation is known for the run's repository** (listen-only
//!   without App credentials, `API_TOKEN`-only setups, a repository the App
//!   has not heard of yet): the owner decides. Every repository must have the
//!   run's repository's owner; a GitHub account has at most one installation
//!   of an App, so this never joins two installations.
//!
//! A target that names an owner alone (an organization's project) lies
//! under that owner: it must be the run's repository's owner.
//!
//! Pure: the caller says which installation a repository is mapped to
//! (`ingest::tenancy` asks the store). The readers' scope
//! (`read::query::RepoScope::sees`) reads the same `parts`.

use std::fmt;

pub use super::ident::owner_of;
use super::ExecutionRecord;

/// Which of an output's repositories a check is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The output's own repository (the `repo` of its manifest line).
    Repository,
    /// The repository (or owner) of the object it affected.
    Target,
}

impl Part {
    fn name(self) -> &'static str {
        match self {
            Part::Repository => "repository",
            Part::Target => "target",
        }
    }
}

/// The installation an output belongs to, as far as the App knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Home {
    /// The installation the run's repository is mapped to.
    Installation(u64),
    /// No installation is known to cover the run's repository: its owner.
    Owner(String),
}

/// Why an output was refused: one of its repositories lies outside its
/// run's installation. `Display` is the reason given to the poster and in
/// logs (it names repositories: never on a public page).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub part: Part,
    /// The repository (or owner) outside.
    pub repo: String,
    /// The run's repository the output is anchored to.
    pub run_repo: String,
    pub home: Home,
    /// The installation `repo` is mapped to, if any.
    pub theirs: Option<u64>,
}

impl Refusal {
    /// A short label without names, for counts on `/status` and `/metrics`.
    pub fn kind(&self) -> &'static str {
        match (&self.home, self.theirs) {
            (Home::Installation(_), Some(_)) => "other_installation",
            (Home::Installation(_), None) => "not_in_installation",
            (Home::Owner(_), _) => "other_owner",
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (part, repo, run) = (self.part.name(), &self.repo, &self.run_repo);
        match (&self.home, self.theirs) {
            (Home::Installation(home), Some(theirs)) => write!(
                f,
                "{part} {repo} belongs to installation {theirs}, not to installation {home} of the run's repository {run}: an output may only name repositories of its own installation"
            ),
            (Home::Installation(home), None) => write!(
                f,
                "{part} {repo} is not a repository installation {home} of the run's repository {run} is known to cover: an output may only name repositories of its own installation"
            ),
            (Home::Owner(owner), _) => write!(
                f,
                "{part} {repo} is not under {owner}, the owner of the run's repository {run} (no installation of this App is known to cover {run}, so its owner decides)"
            ),
        }
    }
}

impl std::error::Error for Refusal {}

/// GitHub's names are case-insensitive.
pub fn same(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// The repositories an output reads: its own, and its target's (an owner
/// alone for an organization's project). Its watch keys, the observations
/// filed under them and its check run all lie in these.
pub fn parts(record: &ExecutionRecord) -> impl Iterator<Item = (Part, &str)> {
    let target = record
        .target
        .as_ref()
        .map(|t| (Part::Target, t.repo.as_str()));
    std::iter::once((Part::Repository, record.repo.as_str())).chain(target)
}

/// Check `record` against the installation of `run_repo` (the repository
/// of the run it came from; its own `repo` when nothing else is known).
/// `installation_of` says which installation a repository is mapped to; it
/// is not asked at all when every part is `run_repo` itself (the common
/// case: an output in its own repository).
pub fn check<E>(
    run_repo: &str,
    record: &ExecutionRecord,
    installation_of: impl FnMut(&str) -> Result<Option<u64>, E>,
) -> Result<Result<(), Refusal>, E> {
    check_parts(run_repo, parts(record), installation_of)
}

/// The rule over any repositories (`parts`): what `check` does for an
/// output's, and the webhook handler for the keys a delivery files facts
/// under (`Part::Target`).
pub fn check_parts<'a, E>(
    run_repo: &str,
    parts: impl Iterator<Item = (Part, &'a str)>,
    mut installation_of: impl FnMut(&str) -> Result<Option<u64>, E>,
) -> Result<Result<(), Refusal>, E> {
    let run_owner = owner_of(run_repo);
    let foreign: Vec<(Part, &str)> = parts.filter(|(_, repo)| !same(repo, run_repo)).collect();
    if foreign.is_empty() {
        return Ok(Ok(()));
    }
    let home = match installation_of(run_repo)? {
        Some(id) => Home::Installation(id),
        None => Home::Owner(run_owner.to_string()),
    };
    for (part, repo) in foreign {
        let refuse = |theirs| Refusal {
            part,
            repo: repo.to_string(),
            run_repo: run_repo.to_string(),
            home: home.clone(),
            theirs,
        };
        if !repo.contains('/') {
            // An owner-level object (an organization's project).
            if !same(repo, run_owner) {
                return Ok(Err(refuse(None)));
            }
            continue;
        }
        match &home {
            Home::Installation(id) => {
                let theirs = installation_of(repo)?;
                if theirs != Some(*id) {
                    return Ok(Err(refuse(theirs)));
                }
            }
            Home::Owner(owner) => {
                if !same(owner_of(repo), owner) {
                    return Ok(Err(refuse(None)));
                }
            }
        }
    }
    Ok(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Target, TargetKind};
    use std::collections::BTreeMap;

    fn record(repo: &str, target: Option<&str>) -> ExecutionRecord {
        let line = serde_json::json!({
            "id": format!("{repo}:1:0"), "output_type": "add_comment", "repo": repo,
            "run_id": 1, "target": null, "executed_at": "2026-11-01T00:00:00Z",
        });
        let mut r: ExecutionRecord = serde_json::from_value(line).unwrap();
        r.target = target.map(|t| Target::thread(t, TargetKind::Issue, 7));
        r
    }

    fn map(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
        pairs
            .iter()
            .map(|(r, i)| (r.to_ascii_lowercase(), *i))
            .collect()
    }

    fn run(
        known: &BTreeMap<String, u64>,
        run_repo: &str,
        r: &ExecutionRecord,
    ) -> Result<(), Refusal> {
        check(run_repo, r, |repo| {
            Ok::<_, ()>(known.get(&repo.to_ascii_lowercase()).copied())
        })
        .unwrap()
    }

    /// Every combination of run repository, line repository and target over
    /// two installations, their unmapped neighbours and a stranger: accepted
    /// exactly when every repository is the run's, or under its known
    /// installation, or (no installation known) under its owner.
    #[test]
    fn accepted_exactly_within_the_runs_installation_or_owner() {
        let known = map(&[("orga/app1", 1), ("OrgA/app2", 1), ("orgb/secret", 2)]);
        let repos = [
            "orga/app1",
            "ORGA/APP1",
            "orga/app2",
            "orga/unmapped",
            "orgb/secret",
            "orgb/other",
            "stranger/x",
        ];
        let installation = |r: &str| known.get(&r.to_ascii_lowercase()).copied();
        for run_repo in repos {
            for line_repo in repos {
                for target in repos.iter().map(Some).chain([None]) {
                    let r = record(line_repo, target.copied());
                    let verdict = run(&known, run_repo, &r);
                    let within = |repo: &str| match installation(run_repo) {
                        _ if same(repo, run_repo) => true,
                        Some(id) => installation(repo) == Some(id),
                        None => same(owner_of(repo), owner_of(run_repo)),
                    };
                    let want = within(line_repo) && target.is_none_or(|t| within(t));
                    assert_eq!(
                        verdict.is_ok(),
                        want,
                        "{run_repo} {line_repo} {target:?}: {verdict:?}"
                    );
                    if let Err(refusal) = verdict {
                        let text = refusal.to_string();
                        assert!(text.contains(&refusal.repo) && text.contains(run_repo));
                    }
                }
            }
        }
    }

    #[test]
    fn the_reason_names_the_part_and_both_installations() {
        let known = map(&[("orga/app1", 1), ("orgb/secret", 2)]);
        let r = record("orga/app1", Some("orgb/secret"));
        let refusal = run(&known, "orga/app1", &r).unwrap_err();
        assert_eq!(refusal.part, Part::Target);
        assert_eq!(refusal.kind(), "other_installation");
        assert_eq!(
            refusal.to_string(),
            "target orgb/secret belongs to installation 2, not to installation 1 of the run's repository orga/app1: an output may only name repositories of its own installation"
        );
        let r = record("orgb/secret", None);
        let refusal = run(&known, "orga/app1", &r).unwrap_err();
        assert_eq!(refusal.part, Part::Repository);
        let refusal = run(&known, "x/y", &record("z/y", None)).unwrap_err();
        assert_eq!(refusal.kind(), "other_owner");
    }

    #[test]
    fn an_owner_level_target_must_be_the_runs_owner() {
        let known = map(&[("orga/app1", 1)]);
        let mut r = record("orga/app1", None);
        r.target = Some(Target::named("orga", TargetKind::Project, "PVT_1"));
        assert_eq!(run(&known, "orga/app1", &r), Ok(()));
        r.target = Some(Target::named("orgb", TargetKind::Project, "PVT_1"));
        assert!(run(&known, "orga/app1", &r).is_err());
    }

    #[test]
    fn the_same_repository_needs_no_lookup() {
        let r = record("o/r", Some("O/R"));
        let mut asked = Vec::new();
        let verdict = check("o/r", &r, |repo| {
            asked.push(repo.to_string());
            Ok::<_, ()>(None)
        })
        .unwrap();
        assert_eq!(verdict, Ok(()));
        assert!(asked.is_empty(), "{asked:?}");
        let r = record("o/r", Some("o/s"));
        check("o/r", &r, |repo| {
            asked.push(repo.to_string());
            Ok::<_, ()>(None)
        })
        .unwrap()
        .unwrap();
        assert_eq!(asked, vec!["o/r"], "the owner decides: one lookup");
    }
}
