//! `sub_issues` events: a sub-issue link added or removed. The same link is
//! filed under both the parent's and the child's thread keys (each with that
//! issue's state as the snapshot), so an output aimed at either sees it.
//!
//! The payload has no time of its own: the later of the two issues'
//! `updated_at` is the best bound (linking touches both).

use serde::Deserialize;

use super::payload::{parse_time, Item, Repository};
use super::{Ctx, Fact, NormResult, Output};
use crate::model::target::thread_key;
use crate::model::ObservationKind as K;

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Body {
    sub_issue: Option<Item>,
    parent_issue: Option<Item>,
    sub_issue_repo: Option<Repository>,
    parent_issue_repo: Option<Repository>,
}

pub(super) fn normalize(ctx: &Ctx) -> NormResult {
    let body: Body = super::payload::shaped(ctx)?;
    let (Some(parent), Some(child)) = (&body.parent_issue, &body.sub_issue) else {
        return Err("`sub_issues` delivery lacks the parent or the sub-issue".to_string());
    };
    let (Some(p), Some(c)) = (parent.number, child.number) else {
        return Err("`sub_issues` issue has no number".to_string());
    };
    let action = ctx.action();
    let at = parse_time(parent.updated_at.as_ref())
        .max(parse_time(child.updated_at.as_ref()))
        .ok_or_else(|| format!("`sub_issues.{action}` has no timestamp"))?;
    let kind = match action {
        "sub_issue_added" | "parent_issue_added" => K::SubIssueAdded {
            parent: p,
            child: c,
        },
        "sub_issue_removed" | "parent_issue_removed" => K::SubIssueRemoved {
            parent: p,
            child: c,
        },
        _ => ctx.other(),
    };
    let repo_of = |item: &Item, named: &Option<Repository>| {
        item.html_url
            .as_deref()
            .and_then(repo_from_url)
            .or_else(|| named.as_ref().and_then(Repository::slug))
            .unwrap_or_else(|| ctx.repo.to_string())
    };
    let mut out = Output::default();
    for (item, number, named) in [
        (parent, p, &body.parent_issue_repo),
        (child, c, &body.sub_issue_repo),
    ] {
        out.observations.push(Fact {
            at,
            target: thread_key(&repo_of(item, named), number),
            kind: kind.clone(),
            snapshot: Some(item.snapshot(item.is_pr(false))),
        });
    }
    Ok(out)
}

/// The events this family normalizes: `sub_issues`.
pub(super) const EVENTS: super::Events = &[("sub_issues", normalize)];

/// `owner/repo` from `https://github.com/owner/repo/issues/N`.
fn repo_from_url(url: &str) -> Option<String> {
    let path = url.split_once("://").map_or(url, |(_, r)| r);
    let mut segs = path.split('/').skip(1);
    let (owner, name) = (segs.next()?, segs.next()?);
    (!owner.is_empty() && !name.is_empty() && segs.next() == Some("issues"))
        .then(|| format!("{owner}/{name}"))
}

#[cfg(test)]
mod tests {
    use super::super::discussions::test_fixtures::{
        own_fixture, relevant_delivery, targets_of, time,
    };
    use crate::model::{ObservationKind as K, TargetKind};

    #[test]
    fn a_link_is_filed_under_parent_and_child() {
        let d = relevant_delivery(
            "sub_issues",
            &own_fixture("sub_issues/sub_issue_added.json"),
        );
        assert_eq!(targets_of(&d), vec!["acme/widgets#40", "acme/widgets#41"]);
        for o in &d.observations {
            assert_eq!(
                o.event,
                K::SubIssueAdded {
                    parent: 40,
                    child: 41
                }
            );
            assert_eq!(o.at, time("2026-06-01T12:00:02Z"));
            assert_eq!(o.snapshot.as_ref().unwrap().kind, Some(TargetKind::Issue));
        }
        assert_eq!(
            d.observations[0].snapshot.as_ref().unwrap().title,
            "Epic: flaky tests"
        );
    }

    #[test]
    fn removal_and_cross_repo_parent() {
        let mut v: serde_json::Value =
            serde_json::from_slice(&own_fixture("sub_issues/sub_issue_added.json")).unwrap();
        v["action"] = "parent_issue_removed".into();
        v["parent_issue"]["html_url"] = "https://github.com/acme/roadmap/issues/40".into();
        let d = relevant_delivery("sub_issues", &serde_json::to_vec(&v).unwrap());
        assert_eq!(d.observations[0].target, "acme/roadmap#40");
        assert_eq!(
            d.observations[1].event,
            K::SubIssueRemoved {
                parent: 40,
                child: 41
            }
        );
    }

    #[test]
    fn incomplete_payloads_are_ignored() {
        let got = crate::ingest::webhook::normalize(
            "sub_issues",
            "d",
            br#"{"action":"sub_issue_added","sub_issue":{"number":2},"repository":{"full_name":"o/r"}}"#,
        )
        .unwrap();
        assert!(matches!(
            got,
            crate::ingest::webhook::Normalized::Ignored { .. }
        ));
    }
}
