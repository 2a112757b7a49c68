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
    pub(crate) fn allows(&self, repo: &str) -> bool {
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
    pub(crate) fn sees(&self, record: &ExecutionRecord) -> bool {
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
    pub(crate) fn parse(
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
    pub(crate) fn id_prefix(&self) -> String {
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
    pub(crate) fn admits(&self, stored: &StoredOutput, scope: &RepoScope) -> bool {
        let execution = &stored.execution;
        let Some(outcome) = stored.outcome.as_ref() else {
            return false;
        };
        scope.sees(execution)
            && self.repo.as_deref().is_none_or(|r| r == execution.repo)
            && self.admits_outcome(outcome)
    }

    /// The workflow and type cuts: of an output of `workflow` (if named)
    /// and type `output_type`.
    pub(crate) fn admits_kind(&self, workflow: Option<&str>, output_type: &str) -> bool {
        self.workflow.as_deref().is_none_or(|w| workflow == Some(w))
            && self.output_type.as_deref().is_none_or(|t| t == output_type)
    }

    /// The cuts that read the outcome record alone (no scope, no repo).
    pub(crate) fn admits_outcome(&self, outcome: &OutcomeRecord) -> bool {
        self.admits_kind(outcome.workflow.as_deref(), &outcome.safe_output_type)
            && self.status.is_none_or(|s| s == outcome.outcome_status)
            && self.strength.is_none_or(|s| s == outcome.evidence_strength)
            && self.since.is_none_or(|t| outcome.created_at >= t)
            && self.until.is_none_or(|t| outcome.created_at < t)
    }
}

/// The years `since` and `until` take: four digits from 1000 to 2999. Every
/// instant the reads derive from them (the series' default first week, 11
/// weeks before `until`; its last week's end, the Monday after `until`)
/// then stays a four-digit year, which RFC 3339 requires of every instant
/// the API answers with (`Series.since`, `Period.period_end`). GitHub holds
/// nothing older; the OpenAPI document says the same with a `pattern`.
pub(crate) const YEARS: std::ops::RangeInclusive<i32> = 1000..=2999;

/// `2026-11-01` (midnight UTC) or an RFC 3339 instant, exactly as the
/// OpenAPI document's `pattern` of `since`/`until` spells them: `T` and `Z`
/// upper-case, seconds 00 to 59, at most nine digits of fraction, a year in
/// `YEARS`. Anything else is a 400 naming the parameter (no value the
/// document refuses is read).
fn parse_instant(name: &str, value: &str) -> Result<DateTime<Utc>, ApiError> {
    instant(value).ok_or_else(|| {
        ApiError::bad_request(format!(
            "{name} {value:?} is neither a date (2026-11-01) nor an RFC 3339 instant \
             (2026-11-01T09:30:00Z) with a year from {} to {}",
            YEARS.start(),
            YEARS.end()
        ))
    })
}

fn instant(value: &str) -> Option<DateTime<Utc>> {
    let b = value.as_bytes();
    let digits = |r: std::ops::Range<usize>| {
        b.get(r.clone())
            .filter(|d| d.iter().all(u8::is_ascii_digit))
            .map(|d| d.iter().fold(0u32, |n, c| n * 10 + u32::from(c - b'0')))
    };
    let at = |i: usize, c: u8| b.get(i) == Some(&c);
    let year = digits(0..4)? as i32;
    if !YEARS.contains(&year) || !at(4, b'-') || !at(7, b'-') {
        return None;
    }
    let date = NaiveDate::from_ymd_opt(year, digits(5..7)?, digits(8..10)?)?;
    if b.len() == 10 {
        return Some(date.and_hms_opt(0, 0, 0)?.and_utc());
    }
    if !at(10, b'T') || !at(13, b':') || !at(16, b':') {
        return None;
    }
    let (h, m, sec) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    if h > 23 || m > 59 || sec > 59 {
        return None;
    }
    let mut i = 19;
    let mut nanos = 0u32;
    if at(i, b'.') {
        let n = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if !(1..=9).contains(&n) {
            return None;
        }
        nanos = digits(i + 1..i + 1 + n)? * 10u32.pow(9 - n as u32);
        i += 1 + n;
    }
    let offset_seconds = match b.get(i) {
        Some(b'Z') if b.len() == i + 1 => 0,
        Some(sign @ (b'+' | b'-')) if b.len() == i + 6 && at(i + 3, b':') => {
            let (oh, om) = (digits(i + 1..i + 3)?, digits(i + 4..i + 6)?);
            if oh > 23 || om > 59 {
                return None;
            }
            let s = (oh * 3600 + om * 60) as i64;
            if *sign == b'-' {
                -s
            } else {
                s
            }
        }
        _ => return None,
    };
    let local = date.and_hms_nano_opt(h, m, sec, nanos)?.and_utc();
    Some(local - chrono::Duration::seconds(offset_seconds))
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

    /// `since`/`until` are read exactly as the OpenAPI document's pattern
    /// spells them (schemathesis, issue 45): what chrono's RFC 3339 parser
    /// takes besides (a space for `T`, a leap second, lower-case `z`, ten
    /// digits of fraction) and years outside `YEARS` are refused; what the
    /// pattern takes reads as chrono reads it.
    #[test]
    fn instants_are_read_as_the_document_spells_them() {
        for good in [
            "2026-11-01",
            "1000-01-01",
            "2999-12-31T23:59:59Z",
            "2024-02-29T09:30:00.123456789+05:30",
            "2026-11-01T00:00:00-23:59",
            "2000-02-29T12:00:00.5Z",
        ] {
            let got = instant(good).unwrap_or_else(|| panic!("{good} refused"));
            if good.len() > 10 {
                let chrono = DateTime::parse_from_rfc3339(good).unwrap();
                assert_eq!(got, chrono.with_timezone(&Utc), "{good}");
            }
        }
        for bad in [
            "0000-01-01",
            "0999-12-31",
            "3000-01-01",
            "9999-12-31T23:59:59Z",
            "2026-11-01 00:00:00Z",
            "2026-11-01t00:00:00Z",
            "2026-11-01T00:00:00z",
            "2026-12-31T23:59:60Z",
            "2026-11-01T00:00:00.1234567890Z",
            "2026-11-01T00:00:00.Z",
            "2026-11-01T00:00:00",
            "2026-11-01T00:00:00+24:00",
            "2026-11-01T00:00:00+0530",
            "2025-02-29",
            "1900-02-29",
            "2026-13-01",
            "+2026-11-01",
            "2026-11-01Z",
            "",
        ] {
            assert!(instant(bad).is_none(), "{bad} was taken");
            let err = ReadFilter::parse(&pairs(&format!("since={}", bad.replace('+', "%2B"))), &[]);
            assert!(err.is_err(), "since={bad} was taken");
        }
    }
}
