//! Where the reading commands (`report`, `outputs`) read from, and the cuts
//! they take, in the `gh` style: `-R/--repo`, `--workflow`, `--type`,
//! `--status`, `--strength`, `--since`, `--until` — the read API's own
//! filters (`ReadFilter`), applied to the store of a stopped server
//! (`--data-dir`) or sent to a running one (`--server URL`).
//!
//! Every command that talks to a server names it the same way: `--server URL`
//! (`SAFE_OUTCOMES_URL`) with `--token` (`API_TOKEN`). The older spellings
//! (`replay --to`, `record --to`, `backfill --to`, `report --from`) are
//! aliases for one version.

use std::path::PathBuf;

use anyhow::Context;
use chrono::{DateTime, Duration, NaiveDate, Utc};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Args;
use serde_json::Value;

use super::exit::{fail, for_status, Exit};
use crate::ingest::client::Client;
use crate::model::{EvidenceStrength, OutcomeStatus};
use crate::read::query::{ReadFilter, RepoScope};
use crate::store::Store;

/// The read cuts, as flags.
#[derive(Args, Debug, Clone, Default)]
pub struct FilterArgs {
    /// Only this repository.
    #[arg(short = 'R', long, value_name = "OWNER/NAME", value_parser = parse_repo)]
    pub repo: Option<String>,
    /// Only the outputs of this workflow (its name, as in the outcome record's `workflow`).
    #[arg(long, value_name = "NAME")]
    pub workflow: Option<String>,
    /// Only this safe-output type (`safe_output_type`), e.g. create_pull_request.
    #[arg(long = "type", value_name = "TYPE")]
    pub output_type: Option<String>,
    /// Only outputs with this outcome (`outcome_status`).
    #[arg(long, value_parser = status_parser())]
    pub status: Option<OutcomeStatus>,
    /// Only outputs with this evidence strength (`evidence_strength`).
    #[arg(long, value_parser = strength_parser())]
    pub strength: Option<EvidenceStrength>,
    /// Only outputs executed at or after this: a date (2026-11-01), an RFC 3339 time, or a span ago (30m, 24h, 7d, 2w).
    #[arg(long, value_name = "WHEN", value_parser = parse_when)]
    pub since: Option<DateTime<Utc>>,
    /// Only outputs executed before this (the same forms as --since).
    #[arg(long, value_name = "WHEN", value_parser = parse_when)]
    pub until: Option<DateTime<Utc>>,
}

fn status_parser() -> impl TypedValueParser<Value = OutcomeStatus> {
    PossibleValuesParser::new(OutcomeStatus::ALL.map(OutcomeStatus::as_str))
        .map(|s| OutcomeStatus::parse(&s).expect("a possible value"))
}

fn strength_parser() -> impl TypedValueParser<Value = EvidenceStrength> {
    PossibleValuesParser::new(["strong", "medium", "weak", "none"])
        .map(|s| EvidenceStrength::parse(&s).expect("a possible value"))
}

/// `owner/name`, checked as the server checks it.
pub(crate) fn parse_repo(value: &str) -> Result<String, String> {
    crate::model::ident::repo(value)
        .map(|()| value.to_string())
        .map_err(|e| e.to_string())
}

/// A date, an RFC 3339 instant, or a span before now (`30m`, `24h`, `7d`, `2w`).
pub(crate) fn parse_when(value: &str) -> Result<DateTime<Utc>, String> {
    when(value, Utc::now())
}

fn when(value: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    if let Ok(t) = DateTime::parse_from_rfc3339(value) {
        return Ok(t.with_timezone(&Utc));
    }
    if let Ok(d) = NaiveDate::parse_from_str(value, "%Y-%m-%d") {
        return Ok(d.and_hms_opt(0, 0, 0).expect("midnight").and_utc());
    }
    let (digits, unit) = value.split_at(value.len().saturating_sub(1));
    let span = digits
        .parse::<i64>()
        .ok()
        .filter(|n| *n >= 0)
        .and_then(|n| match unit {
            "m" => Duration::try_minutes(n),
            "h" => Duration::try_hours(n),
            "d" => Duration::try_days(n),
            "w" => Duration::try_weeks(n),
            _ => None,
        });
    span.and_then(|s| now.checked_sub_signed(s)).ok_or_else(|| {
        format!("{value:?} is neither a date (2026-11-01), an RFC 3339 time, nor a span ago (30m, 24h, 7d, 2w)")
    })
}

impl FilterArgs {
    /// The same cuts as the read API's.
    pub(crate) fn to_filter(&self) -> anyhow::Result<ReadFilter> {
        if let (Some(since), Some(until)) = (self.since, self.until) {
            if until <= since {
                return Err(fail(Exit::Usage, "--until must be after --since"));
            }
        }
        Ok(ReadFilter {
            repo: self.repo.clone(),
            workflow: self.workflow.clone(),
            output_type: self.output_type.clone(),
            status: self.status,
            strength: self.strength,
            since: self.since,
            until: self.until,
        })
    }

    /// The cuts as the read API's query parameters.
    pub(crate) fn to_query(&self) -> Vec<(&'static str, String)> {
        let mut q = Vec::new();
        let mut put = |name, value: Option<String>| {
            if let Some(v) = value {
                q.push((name, v));
            }
        };
        put("repo", self.repo.clone());
        put("workflow", self.workflow.clone());
        put("type", self.output_type.clone());
        put("status", self.status.map(|s| s.as_str().to_string()));
        put("strength", self.strength.map(|s| s.as_str().to_string()));
        put("since", self.since.map(|t| t.to_rfc3339()));
        put("until", self.until.map(|t| t.to_rfc3339()));
        q
    }
}

/// Where the outcomes are read from.
#[derive(Args, Debug, Clone)]
pub struct SourceArgs {
    /// Read from the running server at this URL instead of a store.
    #[arg(
        long = "server",
        alias = "from",
        value_name = "URL",
        env = crate::settings::SAFE_OUTCOMES_URL.name
    )]
    pub server: Option<String>,
    /// Bearer token for the server's read API.
    #[arg(long, env = crate::settings::API_TOKEN.name, hide_env_values = true)]
    pub token: Option<crate::settings::Secret>,
    /// The store of a stopped server, read when no --server is given.
    #[arg(long, env = crate::settings::DATA_DIR.name, default_value = "./data")]
    pub data_dir: PathBuf,
    /// Read the store on PostgreSQL (instead of sled under --data-dir).
    #[arg(long, env = crate::settings::DATABASE_URL.name, hide_env_values = true)]
    pub database_url: Option<crate::settings::Secret>,
}

/// An open source of outcomes.
pub enum Source {
    Store(Store),
    Server(Remote),
}

impl SourceArgs {
    pub fn open(&self) -> anyhow::Result<Source> {
        Ok(match &self.server {
            Some(url) => Source::Server(Remote::new(url, self.token.clone())),
            None => Source::Store(crate::store::open_for_reading(
                &self.data_dir,
                crate::settings::exposed(&self.database_url),
            )?),
        })
    }
}

impl Source {
    /// Refuse a repository nothing was ever recorded for (exit 4): an empty
    /// answer for it is a typo more often than a fact.
    pub(crate) async fn require_known_repo(&self, repo: Option<&str>) -> anyhow::Result<()> {
        let Some(repo) = repo else { return Ok(()) };
        let known = match self {
            Source::Store(store) => {
                let filter = ReadFilter {
                    repo: Some(repo.to_string()),
                    ..ReadFilter::default()
                };
                let first = filter
                    .scan(store, &RepoScope::All, &filter.id_prefix(), None)
                    .next();
                first.transpose()?.is_some()
            }
            Source::Server(remote) => {
                let page = remote
                    .get_json(
                        "/api/v1/outputs",
                        &[("repo", repo.to_string()), ("limit", "1".into())],
                    )
                    .await?;
                page["items"].as_array().is_some_and(|i| !i.is_empty())
            }
        };
        if known {
            Ok(())
        } else {
            Err(fail(
                Exit::NotFound,
                format!("no outputs recorded for repository {repo}"),
            ))
        }
    }
}

/// A running server's read API.
pub struct Remote {
    pub url: String,
    pub client: Client,
    token: Option<crate::settings::Secret>,
}

impl Remote {
    pub fn new(url: &str, token: Option<crate::settings::Secret>) -> Remote {
        Remote {
            url: url.trim_end_matches('/').to_string(),
            client: Client::new(
                url,
                None,
                crate::settings::exposed(&token).map(str::to_string),
            ),
            token,
        }
    }

    /// `GET path?query` answered 200 with JSON; a refusal is an error with
    /// the exit code its status means.
    pub(crate) async fn get_json(
        &self,
        path: &str,
        query: &[(&str, String)],
    ) -> anyhow::Result<Value> {
        let answer = self.client.get(&with_query(path, query)?).await?;
        if answer.status != 200 {
            return Err(refused(&self.url, answer.status, &answer.body));
        }
        Ok(answer.body)
    }

    /// `GET path?query`, its body handed over as it arrives, line by line.
    pub(crate) async fn get_lines(
        &self,
        path: &str,
        query: &[(&str, String)],
        mut line: impl FnMut(&[u8]) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let mut req =
            reqwest::Client::new().get(format!("{}{}", self.url, with_query(path, query)?));
        if let Some(token) = &self.token {
            req = req.bearer_auth(token.expose_secret());
        }
        let mut resp = req
            .send()
            .await
            .with_context(|| format!("reaching {}", self.url))?;
        let status = resp.status().as_u16();
        if status != 200 {
            let text = resp.text().await.unwrap_or_default();
            let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
            return Err(refused(&self.url, status, &body));
        }
        let mut pending = Vec::new();
        while let Some(chunk) = resp.chunk().await? {
            pending.extend_from_slice(&chunk);
            while let Some(end) = pending.iter().position(|b| *b == b'\n') {
                let rest = pending.split_off(end + 1);
                line(&pending[..end])?;
                pending = rest;
            }
        }
        if !pending.is_empty() {
            line(&pending)?;
        }
        Ok(())
    }
}

fn with_query(path: &str, query: &[(&str, String)]) -> anyhow::Result<String> {
    if query.is_empty() {
        return Ok(path.to_string());
    }
    Ok(format!(
        "{path}?{}",
        serde_urlencoded::to_string(query).context("encoding the query")?
    ))
}

/// A server's refusal, with the exit code its status means.
pub fn refused(url: &str, status: u16, body: &Value) -> anyhow::Error {
    let detail = body["detail"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| body.to_string());
    fail(
        for_status(status),
        format!("{url} answered {status}: {detail}"),
    )
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn when_takes_dates_instants_and_spans_ago() {
        let now = Utc.with_ymd_and_hms(2026, 11, 25, 12, 0, 0).unwrap();
        assert_eq!(
            when("2026-11-01", now).unwrap(),
            Utc.with_ymd_and_hms(2026, 11, 1, 0, 0, 0).unwrap()
        );
        assert_eq!(
            when("2026-11-01T10:00:00+02:00", now).unwrap(),
            Utc.with_ymd_and_hms(2026, 11, 1, 8, 0, 0).unwrap()
        );
        for (span, hours) in [
            ("30m", 0.5),
            ("24h", 24.0),
            ("7d", 168.0),
            ("2w", 336.0),
            ("0d", 0.0),
        ] {
            let got = when(span, now).unwrap();
            assert_eq!((now - got).num_minutes() as f64 / 60.0, hours, "{span}");
        }
        for bad in [
            "",
            "d",
            "7",
            "7y",
            "-3d",
            "yesterday",
            "2026-13-01",
            "99999999999999w",
        ] {
            assert!(when(bad, now).is_err(), "{bad}");
        }
    }

    #[test]
    fn flags_become_the_read_apis_cuts() {
        let args = FilterArgs {
            repo: Some("acme/widgets".into()),
            status: Some(OutcomeStatus::Rejected),
            since: Some(Utc.with_ymd_and_hms(2026, 11, 1, 0, 0, 0).unwrap()),
            ..FilterArgs::default()
        };
        let pairs: Vec<(String, String)> = args
            .to_query()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        let (from_query, _) = ReadFilter::parse(&pairs, &[]).unwrap();
        assert_eq!(from_query, args.to_filter().unwrap());
        let backwards = FilterArgs {
            since: args.since,
            until: args.since,
            ..FilterArgs::default()
        };
        assert!(backwards.to_filter().is_err());
        assert!(parse_repo("acme").is_err() && parse_repo("acme/widgets").is_ok());
    }
}
