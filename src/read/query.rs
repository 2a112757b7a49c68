//! The cuts a reader asks for (`ReadFilter`: `repo`, `workflow`, `type`,
//! `status`, `strength`, `since`, `until`) and the repositories a reader may
//! see (`RepoScope`). Below the HTTP surface, so the server, the dashboard
//! and the export share one reading of them; `http::read::Reader` decides a
//! request's scope.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, NaiveDate, Utc};

use crate::ingest::ingress::ApiError;
use crate::model::{EvidenceStrength, ExecutionRecord, OutcomeRecord, OutcomeStatus};
use crate::store::{Store, StoreError, StoredOutput};

/// The repositories a reader may see.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RepoScope {
    /// A machine with `API_TOKEN`: everything.
    All,
    /// A signed-in person: exactly these `owner/name` repositories.
    Only(BTreeSet<String>),
}

impl RepoScope {
    pub fn allows(&self, repo: &str) -> bool {
        match self {
            RepoScope::All => true,
            RepoScope::Only(repos) => {
                repos.contains(repo) || repos.contains(&repo.to_ascii_lowercase())
            }
        }
    }
}

impl RepoScope {
    /// Does this reader see the output? Only when it sees every repository
    /// the output reads (`model::tenancy::parts`): its own and its
    /// target's, so an output can never show one repository's activity to
    /// a reader of another. An owner-level target (an organization's
    /// project) lies under the output's own repository's owner.
    pub fn sees(&self, record: &ExecutionRecord) -> bool {
        use crate::model::tenancy::{owner_of, parts, same};
        match self {
            RepoScope::All => true,
            RepoScope::Only(_) => parts(record).all(|(_, repo)| match repo.contains('/') {
                true => self.allows(repo),
                false => same(repo, owner_of(&record.repo)),
            }),
        }
    }

    /// Exactly these repositories (compared without regard to case, as
    /// GitHub does).
    pub fn only<I: IntoIterator<Item = String>>(repos: I) -> RepoScope {
        RepoScope::Only(repos.into_iter().map(|r| r.to_ascii_lowercase()).collect())
    }
}

/// The cuts every read endpoint takes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReadFilter {
    pub repo: Option<String>,
    pub workflow: Option<String>,
    pub output_type: Option<String>,
    pub status: Option<OutcomeStatus>,
    pub strength: Option<EvidenceStrength>,
    /// Outputs executed at or after this instant.
    pub since: Option<DateTime<Utc>>,
    /// Outputs executed before this instant.
    pub until: Option<DateTime<Utc>>,
}

/// The names `ReadFilter` takes from a query string.
pub const FILTER_PARAMS: [&str; 7] = [
    "repo", "workflow", "type", "status", "strength", "since", "until",
];

impl ReadFilter {
    /// Split `pairs` into the filter and the endpoint's own `extra`
    /// parameters. A name that is neither, a repeated name, or a bad value is
    /// a 400 naming it.
    pub fn parse(
        pairs: &[(String, String)],
        extra: &[&str],
    ) -> Result<(ReadFilter, BTreeMap<String, String>), ApiError> {
        let mut filter = ReadFilter::default();
        let mut rest = BTreeMap::new();
        let mut seen = BTreeSet::new();
        for (name, value) in pairs {
            if !seen.insert(name.as_str()) {
                return Err(ApiError::bad_request(format!(
                    "query parameter {name:?} is given twice"
                )));
            }
            if extra.contains(&name.as_str()) {
                rest.insert(name.clone(), value.clone());
                continue;
            }
            filter.set(name, value, extra)?;
        }
        if let (Some(since), Some(until)) = (filter.since, filter.until) {
            // Equal bounds are an empty range, not an error.
            if until < since {
                return Err(ApiError::bad_request("until must not come before since"));
            }
        }
        Ok((filter, rest))
    }

    fn set(&mut self, name: &str, value: &str, extra: &[&str]) -> Result<(), ApiError> {
        let some = |v: &str| Some(v.to_string()).filter(|s| !s.is_empty());
        match name {
            "repo" => self.repo = some(value),
            "workflow" => self.workflow = some(value),
            "type" => self.output_type = some(value),
            "status" => {
                self.status =
                    Some(OutcomeStatus::parse(value).ok_or_else(|| {
                        ApiError::bad_request(format!("unknown status {value:?}"))
                    })?)
            }
            "strength" => {
                self.strength =
                    Some(EvidenceStrength::parse(value).ok_or_else(|| {
                        ApiError::bad_request(format!("unknown strength {value:?}"))
                    })?)
            }
            "since" => self.since = Some(parse_instant("since", value)?),
            "until" => self.until = Some(parse_instant("until", value)?),
            other => {
                let mut known: Vec<&str> = FILTER_PARAMS.to_vec();
                known.extend_from_slice(extra);
                return Err(ApiError::bad_request(format!(
                    "unknown query parameter {other:?}; this endpoint takes {}",
                    known.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// The store key prefix that narrows a scan (output ids start with the
    /// repository).
    pub fn id_prefix(&self) -> String {
        self.repo
            .as_deref()
            .map(|r| format!("{r}:"))
            .unwrap_or_default()
    }

    /// The stored outputs under the id `prefix` (narrower than, or equal
    /// to, `id_prefix()`), after `after`, that pass the cuts and `scope`: the
    /// one scan behind every read (API, dashboard, export, line survival).
    pub fn scan<'s>(
        &'s self,
        store: &'s Store,
        scope: &'s RepoScope,
        prefix: &str,
        after: Option<&str>,
    ) -> impl Iterator<Item = Result<StoredOutput, StoreError>> + 's {
        store
            .outputs(prefix, after)
            .filter(move |r| r.as_ref().map_or(true, |s| self.admits(s, scope)))
    }

    /// Does this output pass the cuts and the reader's scope? Outputs not yet
    /// evaluated never do.
    pub fn admits(&self, stored: &StoredOutput, scope: &RepoScope) -> bool {
        let execution = &stored.execution;
        let Some(outcome) = stored.outcome.as_ref() else {
            return false;
        };
        scope.sees(execution)
            && self.repo.as_deref().is_none_or(|r| r == execution.repo)
            && self.admits_outcome(outcome)
    }

    /// The cuts that read the outcome record alone (no scope, no repo).
    pub fn admits_outcome(&self, outcome: &OutcomeRecord) -> bool {
        self.workflow
            .as_deref()
            .is_none_or(|w| outcome.workflow.as_deref() == Some(w))
            && self
                .output_type
                .as_deref()
                .is_none_or(|t| t == outcome.safe_output_type)
            && self.status.is_none_or(|s| s == outcome.outcome_status)
            && self.strength.is_none_or(|s| s == outcome.evidence_strength)
            && self.since.is_none_or(|t| outcome.created_at >= t)
            && self.until.is_none_or(|t| outcome.created_at < t)
    }
}

/// `2026-11-01` (midnight UTC) or an RFC 3339 instant.
fn parse_instant(name: &str, value: &str) -> Result<DateTime<Utc>, ApiError> {
    if let Ok(t) = DateTime::parse_from_rfc3339(value) {
        return Ok(t.with_timezone(&Utc));
    }
    NaiveDate::parse_from_str(value, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc())
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "{name} {value:?} is neither a date (2026-11-01) nor an RFC 3339 instant"
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(q: &str) -> Vec<(String, String)> {
        serde_urlencoded::from_str(q).unwrap()
    }

    #[test]
    fn parses_every_cut_and_keeps_the_endpoints_own_parameters() {
        let (f, rest) = ReadFilter::parse(
            &pairs("repo=o/r&workflow=triage&type=add_comment&status=accepted&strength=strong&since=2026-11-01&until=2026-11-08T00:00:00Z&cursor=x"),
            &["cursor"],
        )
        .unwrap();
        assert_eq!(f.repo.as_deref(), Some("o/r"));
        assert_eq!(f.workflow.as_deref(), Some("triage"));
        assert_eq!(f.output_type.as_deref(), Some("add_comment"));
        assert_eq!(f.status, Some(OutcomeStatus::Accepted));
        assert_eq!(f.strength, Some(EvidenceStrength::Strong));
        assert_eq!(f.since.unwrap().to_rfc3339(), "2026-11-01T00:00:00+00:00");
        assert_eq!(f.until.unwrap().to_rfc3339(), "2026-11-08T00:00:00+00:00");
        assert_eq!(rest.get("cursor").map(String::as_str), Some("x"));
        assert_eq!(f.id_prefix(), "o/r:");
    }

    #[test]
    fn refuses_unknown_repeated_and_malformed_parameters() {
        for q in [
            "wokflow=x",
            "repo=a&repo=b",
            "status=merged",
            "strength=huge",
            "since=yesterday",
            "since=2026-11-08&until=2026-11-01",
            "cursor=x",
        ] {
            let err = ReadFilter::parse(&pairs(q), &[]).unwrap_err();
            assert_eq!(err.status, axum::http::StatusCode::BAD_REQUEST, "{q}");
        }
    }

    #[test]
    fn a_reader_sees_an_output_only_when_it_sees_every_repository_it_reads() {
        use crate::model::{Target, TargetKind};
        let only = RepoScope::only(["orga/app1".to_string(), "orga/app2".to_string()]);
        let mut record: ExecutionRecord = serde_json::from_value(serde_json::json!({
            "id": "orga/app1:1:0", "output_type": "add_comment", "repo": "orga/app1",
            "run_id": 1, "target": null, "executed_at": "2026-11-01T00:00:00Z",
        }))
        .unwrap();
        assert!(only.sees(&record));
        for (target, seen) in [
            ("orga/app1", true),
            ("ORGA/App2", true),
            ("orgb/secret", false),
            ("orga/other", false),
        ] {
            record.target = Some(Target::thread(target, TargetKind::Issue, 7));
            assert_eq!(only.sees(&record), seen, "{target}");
            assert!(RepoScope::All.sees(&record));
        }
        record.target = Some(Target::named("orga", TargetKind::Project, "P"));
        assert!(
            only.sees(&record),
            "an owner-level target of the output's owner"
        );
        record.target = Some(Target::named("orgb", TargetKind::Project, "P"));
        assert!(!only.sees(&record));
        record.repo = "orgb/secret".into();
        record.target = None;
        assert!(!only.sees(&record));
    }

    #[test]
    fn scope_only_admits_its_repositories() {
        let only = RepoScope::Only(["o/a".to_string()].into());
        assert!(only.allows("o/a"));
        assert!(!only.allows("o/b"));
        assert!(RepoScope::All.allows("x/y"));
        let only = RepoScope::only(["Acme/Widgets".to_string()]);
        assert!(only.allows("acme/widgets") && only.allows("ACME/widgets"));
        assert!(!only.allows("acme/gadgets"));
    }
}
