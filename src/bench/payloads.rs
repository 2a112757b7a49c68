//! Real-shaped webhook bodies for the benches: every field GitHub sends for
//! users, repositories and pull requests, so a `pull_request` delivery weighs
//! what a real one does (~28 KB), plus small `issues`/`issue_comment` ones.

use chrono::{DateTime, Duration, Utc};
use serde_json::{json, Map, Value};

/// The time of the benches' first delivery, 2026-01-01, in a time-based
/// UUID's 100 ns ticks since 1582-10-15.
pub(crate) const FIRST_DELIVERY_TICKS: u64 = (1_767_225_600 + 12_219_292_800) * 10_000_000;

/// The `X-GitHub-Delivery` of the `i`th delivery of a round, shaped as
/// GitHub's are (`ident::time_based_delivery_id`: a time-based UUID, whose
/// text does not sort by time): 20 ms apart (a busy org's stream) from
/// 2026-01-01, on a node of the round's own, so no two rounds share an id.
pub(crate) fn delivery_id(round: &str, i: usize) -> String {
    crate::model::ident::time_based_delivery_id(
        FIRST_DELIVERY_TICKS + 200_000 * i as u64,
        0x2a,
        node_of(round),
    )
}

/// A UUID node for a name (FNV-1a, 48 bits used).
pub(crate) fn node_of(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A user or organization as GitHub embeds it (with all its `*_url` fields).
pub(crate) fn user(login: &str, id: u64, kind: &str) -> Value {
    let api = format!("https://api.github.com/users/{login}");
    json!({
        "login": login, "id": id, "node_id": format!("MDQ6VXNlcnt{id:08}"),
        "avatar_url": format!("https://avatars.githubusercontent.com/u/{id}?v=4"),
        "gravatar_id": "", "url": api, "html_url": format!("https://github.com/{login}"),
        "followers_url": format!("{api}/followers"),
        "following_url": format!("{api}/following{{/other_user}}"),
        "gists_url": format!("{api}/gists{{/gist_id}}"),
        "starred_url": format!("{api}/starred{{/owner}}{{/repo}}"),
        "subscriptions_url": format!("{api}/subscriptions"),
        "organizations_url": format!("{api}/orgs"),
        "repos_url": format!("{api}/repos"),
        "events_url": format!("{api}/events{{/privacy}}"),
        "received_events_url": format!("{api}/received_events"),
        "type": kind, "user_view_type": "public", "site_admin": false
    })
}

/// A repository as GitHub embeds it in `repository` and in `head.repo`/`base.repo`.
pub(crate) fn repository(full_name: &str, id: u64) -> Value {
    let (owner, name) = full_name.split_once('/').unwrap_or(("acme", full_name));
    let api = format!("https://api.github.com/repos/{full_name}");
    let mut r = Map::new();
    r.insert("id".into(), json!(id));
    r.insert("node_id".into(), json!(format!("R_kgDO{id:010}")));
    r.insert("name".into(), json!(name));
    r.insert("full_name".into(), json!(full_name));
    r.insert("private".into(), json!(true));
    r.insert("owner".into(), user(owner, 148820031, "Organization"));
    r.insert(
        "html_url".into(),
        json!(format!("https://github.com/{full_name}")),
    );
    r.insert(
        "description".into(),
        json!("Composable UI widgets for terminal apps"),
    );
    r.insert("fork".into(), json!(false));
    r.insert("url".into(), json!(api));
    for (field, path) in [
        ("forks_url", "/forks"),
        ("keys_url", "/keys{/key_id}"),
        ("collaborators_url", "/collaborators{/collaborator}"),
        ("teams_url", "/teams"),
        ("hooks_url", "/hooks"),
        ("issue_events_url", "/issues/events{/number}"),
        ("events_url", "/events"),
        ("assignees_url", "/assignees{/user}"),
        ("branches_url", "/branches{/branch}"),
        ("tags_url", "/tags"),
        ("blobs_url", "/git/blobs{/sha}"),
        ("git_tags_url", "/git/tags{/sha}"),
        ("git_refs_url", "/git/refs{/sha}"),
        ("trees_url", "/git/trees{/sha}"),
        ("statuses_url", "/statuses/{sha}"),
        ("languages_url", "/languages"),
        ("stargazers_url", "/stargazers"),
        ("contributors_url", "/contributors"),
        ("subscribers_url", "/subscribers"),
        ("subscription_url", "/subscription"),
        ("commits_url", "/commits{/sha}"),
        ("git_commits_url", "/git/commits{/sha}"),
        ("comments_url", "/comments{/number}"),
        ("issue_comment_url", "/issues/comments{/number}"),
        ("contents_url", "/contents/{+path}"),
        ("compare_url", "/compare/{base}...{head}"),
        ("merges_url", "/merges"),
        ("archive_url", "/{archive_format}{/ref}"),
        ("downloads_url", "/downloads"),
        ("issues_url", "/issues{/number}"),
        ("pulls_url", "/pulls{/number}"),
        ("milestones_url", "/milestones{/number}"),
        (
            "notifications_url",
            "/notifications{?since,all,participating}",
        ),
        ("labels_url", "/labels{/name}"),
        ("releases_url", "/releases{/id}"),
        ("deployments_url", "/deployments"),
    ] {
        r.insert(field.into(), json!(format!("{api}{path}")));
    }
    let rest = json!({
        "created_at": "2023-10-04T12:00:00Z", "updated_at": "2026-09-30T18:22:41Z",
        "pushed_at": "2026-10-01T09:03:41Z",
        "git_url": format!("git://github.com/{full_name}.git"),
        "ssh_url": format!("git@github.com:{full_name}.git"),
        "clone_url": format!("https://github.com/{full_name}.git"),
        "svn_url": format!("https://github.com/{full_name}"),
        "homepage": null, "size": 18422, "stargazers_count": 214, "watchers_count": 214,
        "language": "Rust", "has_issues": true, "has_projects": true, "has_downloads": true,
        "has_wiki": false, "has_pages": false, "has_discussions": true, "forks_count": 17,
        "mirror_url": null
    });
    let more = json!({
        "archived": false, "disabled": false, "open_issues_count": 42,
        "license": {"key": "mit", "name": "MIT License", "spdx_id": "MIT",
                    "url": "https://api.github.com/licenses/mit", "node_id": "MDc6TGljZW5zZTEz"},
        "allow_forking": true, "is_template": false, "web_commit_signoff_required": false,
        "topics": ["cli", "rust", "terminal", "tui", "widgets"], "visibility": "private",
        "forks": 17, "open_issues": 42, "watchers": 214, "default_branch": "main",
        "allow_squash_merge": true, "allow_merge_commit": false, "allow_rebase_merge": true,
        "allow_auto_merge": true, "delete_branch_on_merge": true, "allow_update_branch": true,
        "use_squash_pr_title_as_default": true, "squash_merge_commit_message": "PR_BODY",
        "squash_merge_commit_title": "PR_TITLE", "merge_commit_message": "PR_TITLE",
        "merge_commit_title": "MERGE_MESSAGE", "custom_properties": {}
    });
    for part in [rest, more] {
        if let Value::Object(extra) = part {
            r.extend(extra);
        }
    }
    Value::Object(r)
}

fn label(repo: &str, name: &str, id: u64) -> Value {
    json!({
        "id": id, "node_id": format!("LA_kwDO{id:012}"),
        "url": format!("https://api.github.com/repos/{repo}/labels/{name}"),
        "name": name, "color": "d73a4a", "default": false, "description": "Something to look at"
    })
}

fn iso(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// A fake but well-formed 40-hex sha derived from a number.
pub fn sha(n: u64) -> String {
    format!(
        "{:016x}{:016x}{:08x}",
        n.wrapping_mul(0x9e37_79b9_7f4a_7c15),
        n,
        n as u32
    )
}

/// What a generated `pull_request` delivery says.
#[derive(Clone, Debug)]
pub struct PrEvent<'a> {
    pub repo: &'a str,
    pub number: u64,
    pub action: &'a str,
    pub at: DateTime<Utc>,
    pub author: &'a str,
    pub sender: &'a str,
    /// A gh-aw run id: the body carries the gh-aw markers of that run.
    pub gh_aw_run: Option<u64>,
    pub label: Option<&'a str>,
    pub merged: bool,
}

impl<'a> PrEvent<'a> {
    /// `action` by `sender` at `at` on PR `number` of `repo`, which gh-aw
    /// run `run` opened (as `github-actions[bot]`, its markers in the
    /// body); no label, not merged.
    pub fn of_agent_run(
        repo: &'a str,
        number: u64,
        run: u64,
        action: &'a str,
        at: DateTime<Utc>,
        sender: &'a str,
    ) -> PrEvent<'a> {
        PrEvent {
            repo,
            number,
            action,
            at,
            author: "github-actions[bot]",
            sender,
            gh_aw_run: Some(run),
            label: None,
            merged: false,
        }
    }
}

/// A full `pull_request` delivery (~28 KB, like GitHub's).
pub fn pull_request(e: &PrEvent) -> Value {
    let repo = e.repo;
    let n = e.number;
    let api = format!("https://api.github.com/repos/{repo}");
    let html = format!("https://github.com/{repo}/pull/{n}");
    let created = e.at - Duration::minutes(if e.action == "opened" { 0 } else { 90 });
    let closed = e.action == "closed";
    let head_sha = sha(n);
    let branch = format!("ci-coach/improve-build-{n}-3f9c2a1b");
    let mut body = format!(
        "The `test` job spends ~2m40s of every run downloading the crates.io index.\n\n\
         This adds `Swatinem/rust-cache@v2` keyed on `Cargo.lock` (change {n}).\n\n\
         ### Expected effect\n- cold run: unchanged\n- warm run: ~3m10s -> ~0m55s\n\n\
         ### Changes\n- `.github/workflows/ci.yml`: add a cache step before `cargo test`\n"
    );
    if let Some(run) = e.gh_aw_run {
        body.push_str(&format!(
            "\n> Generated by [CI Coach](https://github.com/{repo}/actions/runs/{run})\n\n\
             <!-- gh-aw-agentic-workflow: CI Coach, engine: copilot, id: {run}, workflow_id: ci-coach, run: https://github.com/{repo}/actions/runs/{run} -->\n\n\
             <!-- gh-aw-workflow-id: ci-coach -->"
        ));
    }
    let labels: Vec<Value> = e
        .label
        .iter()
        .map(|l| label(repo, l, 9_000_000 + n))
        .collect();
    let author_id = 41_898_282;
    let author_kind = if e.author.ends_with("[bot]") {
        "Bot"
    } else {
        "User"
    };
    let branch_obj = |git_ref: &str, sha: &str| {
        json!({
            "label": format!("{}:{git_ref}", repo.split('/').next().unwrap_or("acme")),
            "ref": git_ref, "sha": sha,
            "user": user(repo.split('/').next().unwrap_or("acme"), 148820031, "Organization"),
            "repo": repository(repo, 702318455)
        })
    };
    let link = |href: String| json!({ "href": href });
    let links = json!({
        "self": link(format!("{api}/pulls/{n}")), "html": link(html.clone()),
        "issue": link(format!("{api}/issues/{n}")),
        "comments": link(format!("{api}/issues/{n}/comments")),
        "review_comments": link(format!("{api}/pulls/{n}/comments")),
        "review_comment": link(format!("{api}/pulls/comments{{/number}}")),
        "commits": link(format!("{api}/pulls/{n}/commits")),
        "statuses": link(format!("{api}/statuses/{head_sha}"))
    });
    let mut pr = json!({
        "url": format!("{api}/pulls/{n}"), "id": 2_100_000_000u64 + n,
        "node_id": format!("PR_kwDOa3y3mQ{n:010}"), "html_url": html,
        "diff_url": format!("{html}.diff"), "patch_url": format!("{html}.patch"),
        "issue_url": format!("{api}/issues/{n}"), "number": n,
        "state": if closed { "closed" } else { "open" }, "locked": false,
        "title": format!("[ci-coach] Cache cargo registry in CI ({n})"),
        "user": user(e.author, author_id, author_kind), "body": body,
        "created_at": iso(created), "updated_at": iso(e.at),
        "closed_at": if closed { Value::String(iso(e.at)) } else { Value::Null },
        "merged_at": if closed && e.merged { Value::String(iso(e.at)) } else { Value::Null },
        "merge_commit_sha": if closed && e.merged { Value::String(sha(n + 1_000_000)) } else { Value::Null },
        "assignee": user("maria-lopez", 5_120_001, "User"),
        "assignees": [user("maria-lopez", 5_120_001, "User")],
        "requested_reviewers": [user("dev-kim", 5_120_002, "User")],
        "requested_teams": [], "labels": labels, "milestone": null, "draft": false,
        "commits_url": format!("{api}/pulls/{n}/commits"),
        "review_comments_url": format!("{api}/pulls/{n}/comments"),
        "review_comment_url": format!("{api}/pulls/comments{{/number}}"),
        "comments_url": format!("{api}/issues/{n}/comments"),
        "statuses_url": format!("{api}/statuses/{head_sha}"),
        "head": branch_obj(&branch, &head_sha),
        "base": branch_obj("main", &sha(7)),
    });
    let tail = json!({
        "_links": links,
        "author_association": "CONTRIBUTOR", "auto_merge": null, "active_lock_reason": null,
        "merged": closed && e.merged, "mergeable": null, "rebaseable": null,
        "mergeable_state": "unknown",
        "merged_by": if closed && e.merged { user(e.sender, 5_120_003, "User") } else { Value::Null },
        "comments": 2, "review_comments": 1, "maintainer_can_modify": false,
        "commits": 3, "additions": 41, "deletions": 7, "changed_files": 2
    });
    if let (Some(obj), Value::Object(extra)) = (pr.as_object_mut(), tail) {
        obj.extend(extra);
    }
    let mut payload = json!({
        "action": e.action, "number": n, "pull_request": pr,
        "repository": repository(repo, 702318455),
        "organization": {
            "login": "acme", "id": 148820031, "node_id": "O_kgDOCN7GPw",
            "url": "https://api.github.com/orgs/acme",
            "repos_url": "https://api.github.com/orgs/acme/repos",
            "events_url": "https://api.github.com/orgs/acme/events",
            "hooks_url": "https://api.github.com/orgs/acme/hooks",
            "issues_url": "https://api.github.com/orgs/acme/issues",
            "members_url": "https://api.github.com/orgs/acme/members{/member}",
            "public_members_url": "https://api.github.com/orgs/acme/public_members{/member}",
            "avatar_url": "https://avatars.githubusercontent.com/u/148820031?v=4",
            "description": "Acme widgets team"
        },
        "installation": {"id": 4242, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDI0Mg=="},
        "sender": user(e.sender, 5_120_003, if e.sender.ends_with("[bot]") { "Bot" } else { "User" })
    });
    if let (Some(l), Some(obj)) = (e.label, payload.as_object_mut()) {
        obj.insert("label".into(), label(repo, l, 9_000_000 + n));
    }
    payload
}

/// What a generated `issues` / `issue_comment` delivery says.
#[derive(Clone, Debug)]
pub struct IssueEvent<'a> {
    pub repo: &'a str,
    pub number: u64,
    pub action: &'a str,
    pub at: DateTime<Utc>,
    pub sender: &'a str,
    pub gh_aw_run: Option<u64>,
    pub label: Option<&'a str>,
    /// For `issue_comment`: the comment id.
    pub comment_id: Option<u64>,
}

impl<'a> IssueEvent<'a> {
    /// `action` by `sender` at `at` on issue `number` of `repo`, which
    /// gh-aw run `run` opened (its markers in the body); no label, no
    /// comment.
    pub fn of_agent_run(
        repo: &'a str,
        number: u64,
        run: u64,
        action: &'a str,
        at: DateTime<Utc>,
        sender: &'a str,
    ) -> IssueEvent<'a> {
        IssueEvent {
            repo,
            number,
            action,
            at,
            sender,
            gh_aw_run: Some(run),
            label: None,
            comment_id: None,
        }
    }
}

fn small_user(login: &str, id: u64) -> Value {
    let kind = if login.ends_with("[bot]") {
        "Bot"
    } else {
        "User"
    };
    json!({"login": login, "id": id, "node_id": format!("U_{id}"), "type": kind, "site_admin": false,
           "html_url": format!("https://github.com/{login}")})
}

fn small_repo(full_name: &str) -> Value {
    let (owner, name) = full_name.split_once('/').unwrap_or(("acme", full_name));
    json!({"id": 702318455, "node_id": "R_kwDOpX48IZ", "name": name, "full_name": full_name,
           "private": true, "owner": {"login": owner, "id": 148820031, "type": "Organization"},
           "html_url": format!("https://github.com/{full_name}"), "default_branch": "main"})
}

/// A trimmed `issues` delivery (the shape of the demo scenario's).
pub fn issue(e: &IssueEvent) -> Value {
    let closed = e.action == "closed";
    let mut body = String::from("Flaky `widgets::layout` test on macOS runners.\n");
    if let Some(run) = e.gh_aw_run {
        body.push_str(&format!(
            "\n<!-- gh-aw-agentic-workflow: Issue Triage, engine: copilot, id: {run}, workflow_id: issue-triage, run: https://github.com/{}/actions/runs/{run} -->",
            e.repo
        ));
    }
    let labels: Vec<Value> = e
        .label
        .iter()
        .map(|l| label(e.repo, l, 7_000_000 + e.number))
        .collect();
    let issue = json!({
        "url": format!("https://api.github.com/repos/{}/issues/{}", e.repo, e.number),
        "html_url": format!("https://github.com/{}/issues/{}", e.repo, e.number),
        "id": 3_000_000_000u64 + e.number, "node_id": format!("I_kwDO{:010}", e.number),
        "number": e.number, "title": format!("Flaky layout test ({})", e.number),
        "user": small_user("github-actions[bot]", 41898282), "labels": labels,
        "state": if closed { "closed" } else { "open" },
        "state_reason": if closed { Value::String("completed".into()) } else { Value::Null },
        "assignees": [], "milestone": null, "comments": 1,
        "created_at": iso(e.at - Duration::minutes(if e.action == "opened" { 0 } else { 60 })),
        "updated_at": iso(e.at),
        "closed_at": if closed { Value::String(iso(e.at)) } else { Value::Null },
        "body": body
    });
    let mut payload = json!({
        "action": e.action, "issue": issue, "repository": small_repo(e.repo),
        "installation": {"id": 4242}, "sender": small_user(e.sender, 5_120_010)
    });
    let obj = payload.as_object_mut().expect("object");
    if let Some(l) = e.label {
        obj.insert("label".into(), label(e.repo, l, 7_000_000 + e.number));
    }
    if let Some(id) = e.comment_id {
        obj.insert(
            "comment".into(),
            json!({
                "id": id, "node_id": format!("IC_kwDO{id:010}"),
                "html_url": format!("https://github.com/{}/issues/{}#issuecomment-{id}", e.repo, e.number),
                "user": small_user(e.sender, 5_120_010),
                "created_at": iso(e.at), "updated_at": iso(e.at),
                "body": "Reproduced on main; looks like a race in the resize handler.",
                "author_association": "MEMBER"
            }),
        );
    }
    payload
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::webhook::{normalize, Normalized};

    fn at() -> DateTime<Utc> {
        "2026-10-01T09:00:00Z".parse().unwrap()
    }

    #[test]
    fn a_pull_request_delivery_is_real_sized_and_normalizes() {
        let body = pull_request(&PrEvent {
            repo: "acme/widgets",
            number: 50,
            action: "opened",
            at: at(),
            author: "github-actions[bot]",
            sender: "github-actions[bot]",
            gh_aw_run: Some(2101),
            label: None,
            merged: false,
        })
        .to_string();
        assert!(
            (24_000..34_000).contains(&body.len()),
            "{} bytes",
            body.len()
        );
        let Normalized::Relevant(d) = normalize("pull_request", "d1", body.as_bytes()).unwrap()
        else {
            panic!("ignored")
        };
        assert_eq!(d.observations.len(), 1);
        assert_eq!(d.discoveries.len(), 1);
    }

    #[test]
    fn issue_and_comment_deliveries_normalize() {
        let e = IssueEvent {
            repo: "acme/widgets",
            number: 7,
            action: "labeled",
            at: at(),
            sender: "maria-lopez",
            gh_aw_run: None,
            label: Some("bug"),
            comment_id: None,
        };
        let body = issue(&e).to_string();
        assert!(matches!(
            normalize("issues", "d2", body.as_bytes()).unwrap(),
            Normalized::Relevant(_)
        ));
        let c = IssueEvent {
            action: "created",
            comment_id: Some(99),
            ..e
        };
        let body = issue(&c).to_string();
        assert!(matches!(
            normalize("issue_comment", "d3", body.as_bytes()).unwrap(),
            Normalized::Relevant(_)
        ));
    }
}
