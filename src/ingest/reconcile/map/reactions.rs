//! Reactions, dated one by one or counted in a rollup, and team membership
//! (whose reaction or review counts for a team).

use super::{api_id, rollup_counts, Mapper};
use crate::ingest::reconcile::rest::{actor, time};
use crate::model::target::thread_key;
use crate::model::{Actor, ObservationKind as K};
use chrono::{DateTime, Utc};
use serde_json::Value;
use std::collections::BTreeMap;

impl Mapper<'_> {
    /// Reactions (`issues/comments/ID/reactions`, `issues/N/reactions`, or a
    /// GraphQL `reactions.nodes` list): `{id|databaseId, user, content,
    /// created_at|createdAt}` each, filed under `key`. A reaction with no
    /// user (GraphQL gives bots as `null`) or no time is skipped: it could
    /// never be human evidence. Reactions before the action are not answers.
    pub(super) fn reactions(
        &mut self,
        path: &str,
        key: String,
        comment_id: Option<u64>,
        list: &[Value],
    ) {
        for (i, r) in list.iter().enumerate() {
            let (Some(who), Some(at)) = (
                actor(r.get("user")),
                time(r.get("created_at")).or(time(r.get("createdAt"))),
            ) else {
                continue;
            };
            let Some(content) = r.get("content").and_then(Value::as_str) else {
                continue;
            };
            if !self.is_follow_up(at, false) {
                continue;
            }
            let id = api_id(
                "reaction",
                r.get("id").or(r.get("databaseId")).and_then(Value::as_u64),
                format!("{path}:{i}"),
            );
            let content = crate::model::observation::reaction_content(content);
            self.push(
                id,
                at,
                key.clone(),
                Some(who),
                K::Reacted {
                    content,
                    comment_id,
                },
            );
        }
    }

    /// A reaction rollup (`reactions: {total_count, "+1": n, …}` on a REST
    /// issue or comment, GraphQL `reactionGroups`): counts without reactors.
    /// Reactions the rollup counts beyond those the reactor list (`listed`,
    /// when it was read) shows are reactions by actors nobody can see: one
    /// `Reacted` per content with an unknown actor (login ""), at `at`, so
    /// they are evidence of unknown actors, never of absence. A total beyond
    /// the per-content counts is content `any` (a reaction of unknown kind).
    ///
    /// A count has no time: it is placed at the earliest moment it is
    /// proven, the read (`ApiState::read_at`; never before the object's
    /// creation nor the action, `at`), not at the earliest moment its
    /// reactions could have happened. The human check: a person reading
    /// "2 reactions" on a comment a month old cannot say they were there
    /// at T+1h; GitHub dates each reaction (REST `reaction.created_at`,
    /// github-facts-2 §3), and those dates, read from the list
    /// (`reactions`), decide the early windows. Dated at the object's
    /// creation, a count of reactions given days later (or by bots) made
    /// every window from T+1h `accepted/weak`, where the dated list shows
    /// `pending` until the reaction and a person's reaction
    /// `accepted/medium` from it (seed 000 §5: "T+1h: early signal"; gh-aw
    /// §3 add_comment "reactions > 0 → accepted", judged when read). From
    /// the read on it stays evidence of unknown actors, never of absence
    /// (rule 8); before it, a window is judged on what is dated.
    pub(super) fn rollup(
        &mut self,
        path: &str,
        key: String,
        comment_id: Option<u64>,
        rollup: Option<&Value>,
        at: DateTime<Utc>,
        listed: Option<&[Value]>,
    ) {
        let counts = rollup_counts(rollup);
        if counts.is_empty() {
            return;
        }
        let at = self.state.read_at.map_or(at, |read| read.max(at));
        let seen = listed.map(|l| {
            let mut by: BTreeMap<String, u64> = BTreeMap::new();
            for r in l {
                if let Some(c) = r.get("content").and_then(Value::as_str) {
                    *by.entry(crate::model::observation::reaction_content(c))
                        .or_default() += 1;
                }
            }
            by
        });
        let listed_total: u64 = seen.as_ref().map_or(0, |s| s.values().sum());
        for (content, count) in counts {
            let shown = match (&seen, content.as_str()) {
                (Some(_), "any") => listed_total,
                (Some(s), c) => s.get(c).copied().unwrap_or(0),
                (None, _) => 0,
            };
            if count <= shown {
                continue;
            }
            self.push(
                format!("api:{path}:rollup:{content}"),
                at,
                key.clone(),
                Some(Actor::new("", "")),
                K::Reacted {
                    content,
                    comment_id,
                },
            );
        }
    }

    /// `orgs/ORG/teams/SLUG/memberships/LOGIN` (not repository-relative):
    /// 200 `{state: active|pending}` means member iff `active`. A 404 is not
    /// a response, so nothing is filed: it means "not a member" or "team not
    /// visible to the App", which cannot be told apart. The answer has no
    /// time of its own (GitHub keeps no history of a membership): it is
    /// filed at the execution time, a stand-in the judge reads as undated
    /// (`changed: false`; only a `membership` delivery dates a change), so
    /// that a read after the fact bears on every window alike, whichever
    /// checkpoint read it. The fetcher's `_fetched_at` orders two reads (in
    /// the id). Filed under the output's thread.
    pub(super) fn team_membership(
        &mut self,
        path: &str,
        [org, team, login]: [&&str; 3],
        v: &Value,
    ) {
        let Some(state) = v.get("state").and_then(Value::as_str) else {
            return;
        };
        let Some(n) = crate::ingest::reconcile::endpoints::thread_number(self.record) else {
            return;
        };
        let read = time(v.get("_fetched_at")).unwrap_or(self.fallback);
        let member = state == "active";
        self.push(
            format!("api:{path}:{:020}:{member}", read.timestamp_millis()),
            self.fallback,
            thread_key(&self.repo, n),
            None,
            K::TeamMember {
                org: org.to_string(),
                team: team.to_ascii_lowercase(),
                login: login.to_string(),
                member,
                changed: false,
            },
        );
    }
}
