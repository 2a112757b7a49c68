//! `GET /api/v1/series?by=week&…`: the three acceptance rates (strict,
//! human-check, sticky — never one blended number) and the counts of each
//! status, per ISO week (Monday 00:00 UTC), by the execution time of the
//! outputs. Field names are the report's (`Totals`, `TypeStats`).
//!
//! The rates are read at one maturity, `window=` (`1h`, `24h`, `7d`, `30d`):
//! each output counts with its verdict at T+window, so an old week and a
//! recent one are compared at the same age. By default the window is the
//! latest every output in the range has reached (`mature_window`). Outputs
//! not at the window yet are left out of a week's rates and counted in its
//! `not_yet_at_window`; such a week is `immature`. The API reads the
//! rollups (`read::rollup::weekly`, each cell holding its outputs' verdicts
//! at every window), and so do the dashboard's pages (`of_sums`).
//!
//! The weeks run from `since` (default: eleven weeks before the week of
//! `until`, so twelve weeks) to `until` (default: now); weeks with no output
//! are listed with zero counts and no rates, so a chart has one slot per week.

use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, Datelike, Duration, NaiveTime, Utc};
use serde::{Deserialize, Serialize};

use super::budget::blocking;
use super::read::{QueryPairs, Read, ReadFilter, Reader};
use super::{ApiError, Mount, State};
use crate::model::OutcomeRecord;
use crate::read::report::{parse_window, Report, Sums, Totals, TypeStats};
use crate::store::rollup::{day_of, week_of_day};

/// Weeks shown when `since` is not given.
pub(crate) const DEFAULT_WEEKS: i64 = 12;
/// The longest series answered (five years of weeks): memory stays bounded.
pub(crate) const MAX_PERIODS: i64 = 260;

/// One week.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Period {
    /// ISO week, `2026-W45`.
    pub week: String,
    pub period_start: DateTime<Utc>,
    pub period_end: DateTime<Utc>,
    /// Counts of the outputs at the window (those not there yet left out).
    pub totals: Totals,
    /// `total_safe_outputs`, `evaluable_outputs` and the rates, named as in the report's `by_type`.
    #[serde(flatten)]
    pub rates: TypeStats,
    /// Outputs of the week that have not reached the window yet.
    pub not_yet_at_window: u64,
    /// Some output of the week has not reached the window: its rates may
    /// still change.
    pub immature: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct Series {
    pub by: String,
    /// The maturity the rates are read at.
    pub window: String,
    /// `asked` (the `window` parameter) or `default` (the latest window
    /// every output in the range has reached).
    pub window_chosen: String,
    pub since: DateTime<Utc>,
    pub until: DateTime<Utc>,
    pub generated_at: DateTime<Utc>,
    pub periods: Vec<Period>,
}

/// Monday 00:00 UTC of the week holding `t`.
pub(crate) fn week_start(t: DateTime<Utc>) -> DateTime<Utc> {
    let day = t.date_naive() - Duration::days(t.weekday().num_days_from_monday() as i64);
    day.and_time(NaiveTime::MIN).and_utc()
}

/// The weeks a series covers: the first Monday and the count of weeks.
pub fn weeks_of(filter: &ReadFilter, now: DateTime<Utc>) -> Result<(DateTime<Utc>, i64), ApiError> {
    let until = filter.until.unwrap_or(now);
    let last = week_start(until - Duration::nanoseconds(1));
    let first = match filter.since {
        Some(since) => week_start(since),
        None => last - Duration::weeks(DEFAULT_WEEKS - 1),
    };
    let weeks = (last - first).num_weeks() + 1;
    if weeks > MAX_PERIODS {
        return Err(ApiError::bad_request(format!(
            "the series spans {weeks} weeks; at most {MAX_PERIODS} are answered (narrow since/until)"
        )));
    }
    Ok((first, weeks.max(1)))
}

/// One week's row (as of the latest outcome: nothing left out).
fn period(start: DateTime<Utc>, (totals, rates): (Totals, TypeStats)) -> Period {
    period_at(start, (totals, rates, 0))
}

/// One week's row at a window, `not_yet` outputs left out.
fn period_at(start: DateTime<Utc>, (totals, rates, not_yet): (Totals, TypeStats, u64)) -> Period {
    Period {
        week: format!(
            "{}-W{:02}",
            start.iso_week().year(),
            start.iso_week().week()
        ),
        period_start: start,
        period_end: start + Duration::weeks(1),
        totals,
        rates,
        not_yet_at_window: not_yet,
        immature: not_yet > 0,
    }
}

/// Bucket `records` into `weeks` weeks from `first`; records outside are
/// left out (the series from the outputs themselves, as tests compare).
pub fn weekly(records: &[OutcomeRecord], first: DateTime<Utc>, weeks: i64) -> Vec<Period> {
    let mut buckets: Vec<Vec<&OutcomeRecord>> = vec![Vec::new(); weeks as usize];
    for r in records {
        let i = (week_start(r.created_at) - first).num_weeks();
        if r.created_at >= first && i < weeks {
            buckets[i as usize].push(r);
        }
    }
    buckets
        .into_iter()
        .enumerate()
        .map(|(i, rs)| period(first + Duration::weeks(i as i64), Report::overall(rs)))
        .collect()
}

/// The same weeks from rollup sums per week number.
pub fn weekly_from_sums(
    sums: &std::collections::BTreeMap<i64, Sums>,
    first: DateTime<Utc>,
    weeks: i64,
) -> Vec<Period> {
    weekly_from_sums_at(sums, first, weeks, None)
}

/// `weekly_from_sums` at `window` (`None`: the latest outcome).
pub(crate) fn weekly_from_sums_at(
    sums: &std::collections::BTreeMap<i64, Sums>,
    first: DateTime<Utc>,
    weeks: i64,
    window: Option<&str>,
) -> Vec<Period> {
    let first_week = week_of_day(day_of(first));
    (0..weeks)
        .map(|i| {
            let start = first + Duration::weeks(i);
            let s = sums.get(&(first_week + i)).cloned().unwrap_or_default();
            period_at(start, s.at_window(window))
        })
        .collect()
}

/// The window of `window=`: a checkpoint name, or `None` for the default.
pub(crate) fn asked_window(value: Option<&str>) -> Result<Option<&'static str>, ApiError> {
    value
        .filter(|w| !w.is_empty())
        .map(|w| {
            parse_window(w).ok_or_else(|| {
                ApiError::bad_request(format!("window {w:?} is not one of 1h, 24h, 7d, 30d"))
            })
        })
        .transpose()
}

/// The series of the outputs `reader` may see under `filter`, at `window`
/// (`None`: the latest window every output in the range has reached), from
/// the rollups.
pub(crate) async fn build(
    state: &State,
    reader: &Reader,
    filter: ReadFilter,
    window: Option<&'static str>,
) -> Result<Series, ApiError> {
    let now = state.shared.clock.now();
    let (first, weeks) = weeks_of(&filter, now)?;
    let sums = blocking(state, &filter, &reader.scope, move |store, f, scope| {
        crate::read::rollup::weekly(store, f, scope, first, weeks)
    })
    .await?;
    Ok(of_sums(&sums, first, weeks, window, now))
}

/// The series of rollup sums per week number over `weeks` weeks from
/// `first`, at `window` (`None`: the latest window every output of them
/// has reached).
pub(crate) fn of_sums(
    sums: &std::collections::BTreeMap<i64, Sums>,
    first: DateTime<Utc>,
    weeks: i64,
    window: Option<&'static str>,
    now: DateTime<Utc>,
) -> Series {
    let chosen = window.unwrap_or_else(|| {
        let mut all = Sums::default();
        for s in sums.values() {
            all.merge(s);
        }
        all.mature_window()
    });
    Series {
        by: "week".into(),
        window: chosen.to_string(),
        window_chosen: if window.is_some() { "asked" } else { "default" }.into(),
        since: first,
        until: first + Duration::weeks(weeks),
        generated_at: now,
        periods: weekly_from_sums_at(sums, first, weeks, Some(chosen)),
    }
}

/// `GET /api/v1/series`.
pub(crate) fn routes(_: &Mount) -> Router<State> {
    Router::new().route("/api/v1/series", get(series))
}

pub(crate) async fn series(
    Read(state, reader, ..): Read<Reader>,
    QueryPairs(pairs): QueryPairs,
) -> Result<Json<Series>, ApiError> {
    let (filter, rest) = ReadFilter::parse(&pairs, &["by", "window"])?;
    // The API's `window` is one of the document's enumeration or absent;
    // an empty one (what the dashboard's form sends for its default) is
    // refused here like any value not listed.
    if rest.get("window").is_some_and(|w| w.is_empty()) {
        return Err(ApiError::bad_request(
            "window \"\" is not one of 1h, 24h, 7d, 30d (leave it out for the default)",
        ));
    }
    let window = asked_window(rest.get("window").map(String::as_str))?;
    match rest.get("by").map(String::as_str) {
        None | Some("week") => {}
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "by={other:?}: only by=week is offered"
            )))
        }
    }
    Ok(Json(build(&state, &reader, filter, window).await?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::at;

    #[test]
    fn weeks_start_on_monday_midnight_utc() {
        assert_eq!(
            week_start(at("2026-11-22T23:59:59Z")),
            at("2026-11-16T00:00:00Z")
        );
        assert_eq!(
            week_start(at("2026-11-16T00:00:00Z")),
            at("2026-11-16T00:00:00Z")
        );
    }

    #[test]
    fn the_default_is_twelve_weeks_and_long_spans_are_refused() {
        let now = at("2026-11-21T12:00:00Z");
        let (first, weeks) = weeks_of(&ReadFilter::default(), now).unwrap();
        assert_eq!(weeks, 12);
        assert_eq!(first, at("2026-08-31T00:00:00Z"));
        let long = ReadFilter {
            since: Some(at("2000-01-01T00:00:00Z")),
            ..ReadFilter::default()
        };
        assert_eq!(
            weeks_of(&long, now).unwrap_err().status,
            axum::http::StatusCode::BAD_REQUEST
        );
        let exact = ReadFilter {
            since: Some(at("2026-11-02T00:00:00Z")),
            until: Some(at("2026-11-16T00:00:00Z")),
            ..ReadFilter::default()
        };
        assert_eq!(
            weeks_of(&exact, now).unwrap(),
            (at("2026-11-02T00:00:00Z"), 2)
        );
    }
}
