//! Tenancy (docs/auth.md, "Tenancy") as a property over every ingest path,
//! with two installations of one App: A on `orga` (two private
//! repositories) and B on `orgb` (one private repository with private
//! activity). A's runs name B's repository, an unlisted repository of A's
//! own owner and a stranger's, through a manifest posted with the API
//! token, an OIDC manifest, a harvested artifact, a backfilled run, a
//! webhook naming B's issue as a sub-issue, inbox
//! items that reach registration directly (a webhook discovery, a manifest
//! stored before the rule) and a reconcile after A loses a repository.
//! Every foreign line or output is refused with its reason (in the answer,
//! counted on `/status` and `/metrics`), nothing of it is stored and GitHub
//! is never read for it; what lies within A is kept. Then A's viewer (a
//! GitHub sign-in) and A's installation token read every route of the
//! router (read from the router itself, `routes::of`) with B's names and
//! A's in the path: no answer shows anything of B.

use chrono::Utc;
use reqwest::header::{COOKIE, LOCATION, SET_COOKIE};
use reqwest::redirect::Policy;
use safe_outcomes::github::backfill::BackfillOptions;
use safe_outcomes::github::harvest::HarvestOptions;
use safe_outcomes::github::reconciler::ReconcilerOptions;
use safe_outcomes::http::auth::{AuthOptions, OAuthApp};
use safe_outcomes::http::{router, RouterOptions};
use safe_outcomes::model::clock::Clock;
use safe_outcomes::model::ExecutionRecord;
use safe_outcomes::store::inbox::InboxItem;
use safe_outcomes::store::StoredOutput;
use serde_json::{json, Value};

use crate::answers;
use crate::common::tester::Tester;
use crate::common::{self, TestApp, TOKEN};
use crate::fake_github::users::{CLIENT_ID, CLIENT_SECRET};
use crate::fake_github::zip_of;
use crate::oidc::{token_from, Issuer};
use crate::routes;
use crate::sign_in::fetch;

const A: u64 = 11;
const B: u64 = 22;
const A_APP: &str = "orga/app";
const A_TOOLS: &str = "orga/tools";
const B_SECRET: &str = "orgb/secret";
const LOCK: &str = ".github/workflows/a-wf.lock.yml";
/// What B's private activity is made of: none may reach a reader of A
/// (unless the reader's own request named it).
const B_MARKS: [&str; 6] = [
    "orgb",
    "secret",
    "Bsecrettitle",
    "bsecretuser",
    "bsecretlabel",
    "b-private-wf",
];

/// The lines one run of A's writes: two within A (its own repository and
/// another of its installation), then five that are not — B's repository
/// as the target (by URL and by the Oct `target`), as the line's own
/// repository, a stranger's repository, and a repository of A's own owner
/// that installation A does not cover.
fn lines_of_a_run(run: u64) -> Vec<Value> {
    vec![
        json!({"type": "create_issue", "repo": A_APP, "number": run,
               "url": format!("https://github.com/{A_APP}/issues/{run}")}),
        json!({"type": "add_comment", "repo": A_APP, "commentId": run + 1, "number": 3,
               "url": format!("https://github.com/{A_TOOLS}/issues/3#issuecomment-{}", run + 1)}),
        json!({"type": "add_comment", "repo": A_APP, "commentId": 56, "number": 7,
               "url": "https://github.com/orgb/secret/issues/7#issuecomment-56"}),
        json!({"type": "add_labels", "repo": B_SECRET, "number": 7, "labels": ["x"]}),
        json!({"type": "update_issue", "repo": A_APP,
               "target": {"repository": B_SECRET, "number": 7, "kind": "issue"}}),
        json!({"type": "create_issue", "repo": A_APP, "number": 1,
               "url": "https://github.com/stranger/x/issues/1"}),
        json!({"type": "create_issue", "repo": A_APP, "number": 2,
               "url": "https://github.com/orga/unlisted/issues/2"}),
    ]
}

/// The foreign lines' refusals by reason, per run.
const REFUSED_PER_RUN: [(&str, u64); 2] = [("other_installation", 3), ("not_in_installation", 2)];

fn jsonl(lines: &[Value]) -> String {
    lines
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// The App with a harvester, a reconciler and a two-day backfill, its
/// sign-in and OIDC on, against a fake GitHub and `issuer`.
async fn start(issuer: &Issuer) -> Tester {
    let verifier = issuer.verifier();
    Tester::setup_on(Clock::System)
        .harvester(HarvestOptions::default())
        .reconciler(ReconcilerOptions::default())
        .backfill(
            HarvestOptions::default(),
            BackfillOptions {
                days: 2,
                reserve: 0,
                ..BackfillOptions::default()
            },
        )
        .router(move |gh, _| RouterOptions {
            oidc: Some(verifier),
            auth: AuthOptions {
                public_url: "http://outcomes.invalid".into(),
                api_url: gh.url.clone(),
                web_url: gh.url.clone(),
                oauth: Some(OAuthApp {
                    client_id: CLIENT_ID.into(),
                    client_secret: CLIENT_SECRET.into(),
                }),
                ..AuthOptions::default()
            },
            ..RouterOptions::default()
        })
        .start()
        .await
}

/// Every stored output's id.
fn stored(r: &Tester) -> Vec<String> {
    r.t.app
        .store
        .outputs("", None)
        .map(|o| o.unwrap().execution.id)
        .collect()
}

/// B's private activity: an agent's issue (discovered from its marker), a
/// comment and a label by B's people, all delivered for installation B.
async fn b_private_activity(r: &Tester) {
    let body = "Private.\n\n<!-- gh-aw-agentic-workflow: B, engine: copilot, id: 900, workflow_id: b-private-wf, run: https://github.com/orgb/secret/actions/runs/900 -->";
    let issue = json!({"number": 7, "id": 7007, "node_id": "I_b7", "title": "Bsecrettitle",
        "html_url": "https://github.com/orgb/secret/issues/7", "body": body, "state": "open",
        "user": common::user("github-actions[bot]"), "labels": [],
        "created_at": common::at(1), "updated_at": common::at(1)});
    let repo = json!({"full_name": B_SECRET, "name": "secret", "owner": {"login": "orgb"}});
    let sender = common::user("bsecretuser");
    let deliveries = [
        (
            "issues",
            json!({"action": "opened", "issue": issue, "repository": repo,
            "installation": {"id": B}, "sender": common::user("github-actions[bot]")}),
        ),
        (
            "issue_comment",
            json!({"action": "created", "issue": issue, "repository": repo,
            "installation": {"id": B}, "sender": sender,
            "comment": {"id": 56, "body": "bsecretuser says no", "user": sender,
                        "created_at": common::at(2), "updated_at": common::at(2),
                        "html_url": "https://github.com/orgb/secret/issues/7#issuecomment-56"}}),
        ),
        (
            "issues",
            json!({"action": "labeled", "issue": issue, "repository": repo,
            "installation": {"id": B}, "sender": sender,
            "label": {"name": "bsecretlabel"}}),
        ),
    ];
    for (n, (event, body)) in deliveries.iter().enumerate() {
        r.t.deliver_ok(event, &format!("b-{n}"), body).await;
    }
}

/// An output of A aimed at B's comment, as a store written before the rule
/// may hold: straight into the store, past every ingest path. B's activity
/// on its target then judges it; only the readers' scope (the output's
/// repository and its target's) keeps it from A's readers.
const LEGACY: &str = "orga/app:99:0";

async fn store_a_legacy_output(r: &Tester) {
    let execution: ExecutionRecord = serde_json::from_value(json!({
        "id": LEGACY, "output_type": "add_comment", "repo": A_APP, "run_id": 99,
        "workflow": "a-wf",
        "target": {"repo": B_SECRET, "kind": "comment", "id": 56, "parent_number": 7},
        "executed_at": common::at(0), "sources": {"manifest": true}}))
    .unwrap();
    let mut unit = r.t.app.store.begin();
    unit.put_output(&StoredOutput {
        execution,
        outcome: None,
        trace_id: None,
    })
    .unwrap();
    unit.commit().unwrap();
}

/// Ask for `id` to be reconciled: refused with the reason (409), and no
/// repository is read, not even by the tasks that had it queued.
async fn reconcile_reads_nothing(r: &Tester, id: &str) {
    let before = r.gh.log().len();
    let path = format!("/api/v1/outputs/{id}/reconcile");
    let a = r.t.client.post_json(&path, &json!({})).await.unwrap();
    assert_eq!(a.status, 409, "{}", a.body);
    assert_eq!(a.body["error"], "outside_installation", "{}", a.body);
    assert!(
        a.body["detail"].as_str().unwrap().contains("installation"),
        "{}",
        a.body
    );
    r.settle_chain().await;
    let log = r.gh.log();
    let reads: Vec<&String> = log[before..]
        .iter()
        .filter(|l| l.contains("/repos/"))
        .collect();
    assert!(
        reads.is_empty(),
        "GitHub was read for {id}, outside its installation: {reads:?}"
    );
}

/// A manifest post: status and answer.
async fn post_manifest(r: &Tester, query: &str, bearer: &str, lines: &[Value]) -> (u16, Value) {
    let resp = reqwest::Client::new()
        .post(format!("{}/api/v1/manifests{query}", r.t.server.url()))
        .header("content-type", "application/x-ndjson")
        .bearer_auth(bearer)
        .body(jsonl(lines))
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// The ids a run of A may leave: its two lines within A.
fn kept_of_run(run: u64) -> Vec<String> {
    vec![format!("{A_APP}:{run}:0"), format!("{A_APP}:{run}:1")]
}

#[tokio::test]
async fn nothing_crosses_an_installation_on_any_ingest_path_or_any_read() {
    let issuer = Issuer::start().await;
    let r = start(&issuer).await;
    // Runs of A the harvester (101) and the backfill (102) will read.
    for run in [101, 102] {
        let zip = zip_of(&[("safe-output-items.jsonl", &jsonl(&lines_of_a_run(run)))]);
        r.gh.add_artifact(A_APP, run, "safe-outputs-items", zip);
    }
    r.gh.add_run(
        A_APP,
        102,
        LOCK,
        "completed",
        Utc::now() - chrono::Duration::hours(2),
    );
    // B first: A's backfill starts as soon as A is filed, and must find
    // B's repository already mapped to B (else the reason differs).
    r.install(B, "orgb", &[B_SECRET]).await;
    r.settle_chain().await;
    r.install(A, "orga", &[A_APP, A_TOOLS]).await;
    r.settle_chain().await;
    store_a_legacy_output(&r).await;
    b_private_activity(&r).await;
    r.settle_chain().await;

    // 0. A delivery of A naming B's issue as a sub-issue: the fact is not
    //    filed under B's issue; the one under A's own is.
    let issue = |repo: &str, n: u64, title: &str| {
        json!({"number": n, "title": title,
        "html_url": format!("https://github.com/{repo}/issues/{n}"), "state": "open",
        "updated_at": common::at(3), "created_at": common::at(0)})
    };
    let sub = json!({"action": "sub_issue_added",
        "parent_issue": issue(A_APP, 5, "A epic"), "sub_issue": issue(B_SECRET, 7, "A names B"),
        "repository": {"full_name": A_APP}, "installation": {"id": A},
        "sender": common::user("alice")});
    r.t.deliver_ok("sub_issues", "a-sub-issue", &sub).await;
    r.t.app.wait_idle().await;
    let filed = |key: &str| -> usize {
        let found = r.t.app.store.observations(&[key.to_string()]).unwrap();
        found
            .iter()
            .filter(|o| o.id.contains("a-sub-issue"))
            .count()
    };
    assert_eq!((filed("orga/app#5"), filed("orgb/secret#7")), (1, 0));

    // 1. A manifest posted with the API token, for A's run 100.
    let (status, answer) = post_manifest(
        &r,
        "?repo=orga/app&run_id=100&workflow=a-wf",
        TOKEN,
        &lines_of_a_run(100),
    )
    .await;
    assert_eq!(status, 202, "{answer}");
    assert_eq!(answer["accepted"], 2, "{answer}");
    assert_eq!(answer["outside_installation"], 5, "{answer}");
    let rejected = answer["rejected"].as_array().unwrap();
    assert_eq!(rejected.len(), 5, "{answer}");
    for (entry, foreign) in
        rejected
            .iter()
            .zip([B_SECRET, B_SECRET, B_SECRET, "stranger/x", "orga/unlisted"])
    {
        let error = entry["error"].as_str().unwrap();
        assert!(
            error.contains(foreign) && error.contains("installation"),
            "{entry}"
        );
        assert!(error.contains("nothing was stored"), "{entry}");
    }
    // Only foreign lines: a 400, nothing stored.
    let (status, answer) = post_manifest(
        &r,
        "?repo=orga/app&run_id=103",
        TOKEN,
        &lines_of_a_run(103)[2..],
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["outside_installation"], 5, "{answer}");

    // 2. An OIDC manifest of orga/app naming B's repository: refused whole.
    let oidc = token_from(&issuer, "orga", &(A * 10 + 1).to_string());
    let lines = lines_of_a_run(4242);
    let (status, answer) =
        post_manifest(&r, "", &oidc, &[lines[0].clone(), lines[2].clone()]).await;
    assert_eq!(status, 403, "{answer}");
    assert!(
        answer["detail"].as_str().unwrap().contains(B_SECRET),
        "{answer}"
    );

    // 3. A harvested artifact: the run completes on A's repository.
    let completed = json!({"action": "completed",
        "workflow_run": {"id": 101, "name": "A", "path": LOCK, "head_branch": "main", "head_sha": "abc1234",
            "event": "schedule", "status": "completed", "conclusion": "success", "run_attempt": 1,
            "created_at": common::at(1), "run_started_at": common::at(1), "updated_at": common::at(9)},
        "repository": {"full_name": A_APP, "name": "app", "owner": {"login": "orga"}},
        "installation": {"id": A}, "sender": common::user("github-actions[bot]")});
    r.t.deliver_ok("workflow_run", "run-101", &completed).await;
    // 4. The backfill of A's repositories found run 102 (planned when A was installed).
    r.settle_chain().await;

    // 5. Items that reach registration without a manifest's check: a
    //    discovery, and a manifest stored before the rule existed.
    let foreign: ExecutionRecord = serde_json::from_value(json!({
        "id": "orga/app:105:0", "output_type": "add_comment", "repo": A_APP, "run_id": 105,
        "target": {"repo": B_SECRET, "kind": "comment", "id": 56, "parent_number": 7},
        "executed_at": "2026-10-01T00:00:00Z", "sources": {"webhook": true}}))
    .unwrap();
    let mut old = foreign.clone();
    old.id = "orgb/secret:106:0".into();
    old.repo = B_SECRET.into();
    old.target.as_mut().unwrap().repo = "orga/tools".into();
    let now = Utc::now();
    let items = [
        InboxItem::Delivery {
            delivery_id: "crafted-1".into(),
            event: "issue_comment".into(),
            action: Some("created".into()),
            received_at: now,
            observations: Vec::new(),
            discoveries: vec![foreign],
            installation_change: None,
        },
        InboxItem::Manifest {
            key: "before-the-rule".into(),
            received_at: now,
            records: vec![old],
        },
    ];
    for item in items {
        r.t.app.writer.enqueue(item).await.unwrap();
    }
    r.settle_chain().await;

    // 6. A loses orga/tools: run 100's output on it now lies outside A, and
    //    no installation's token reads GitHub for it.
    let removed = json!({"action": "removed", "installation": {"id": A},
        "repositories_added": [], "repositories_removed": [{"full_name": A_TOOLS}],
        "sender": common::user("admin")});
    r.t.deliver_ok("installation_repositories", "inst-a-removed", &removed)
        .await;
    r.settle_chain().await;
    reconcile_reads_nothing(&r, &format!("{A_APP}:100:1")).await;
    // The legacy output was judged on B's activity; GitHub is not read for it.
    let legacy = r.t.app.store.output(LEGACY).unwrap().unwrap();
    assert!(legacy.outcome.is_some(), "B's deliveries judged it");
    reconcile_reads_nothing(&r, LEGACY).await;

    // Nothing foreign was stored, whatever the path; what lies within A was.
    let stored = stored(&r);
    let mut want: Vec<String> = [100, 101, 102].into_iter().flat_map(kept_of_run).collect();
    want.extend(["orgb/secret:900:issue-7".to_string(), LEGACY.to_string()]);
    for id in &want {
        assert!(stored.contains(id), "{id} is kept: {stored:?}");
    }
    for id in &stored {
        assert!(want.contains(id), "{id} was stored: {stored:?}");
    }
    for o in r.t.app.store.outputs("", None) {
        let e = o.unwrap().execution;
        if e.id == LEGACY {
            continue;
        }
        let owners: Vec<&str> = std::iter::once(e.repo.as_str())
            .chain(e.target.as_ref().map(|t| t.repo.as_str()))
            .map(|repo| repo.split('/').next().unwrap())
            .collect();
        assert!(
            owners.windows(2).all(|w| w[0] == w[1]),
            "{} reaches across: {owners:?}",
            e.id
        );
    }

    // Counted by where and why, on /status and /metrics, without a name.
    let status = r.status().await;
    let refused = &status["tenancy"]["refused"];
    for (path, runs) in [("manifest", 2), ("harvest", 2)] {
        for (reason, n) in REFUSED_PER_RUN {
            assert_eq!(refused[path][reason], n * runs, "{path} {reason}: {status}");
        }
    }
    assert_eq!(refused["registration"]["other_installation"], 2, "{status}");
    assert_eq!(refused["webhook"]["other_installation"], 1, "{status}");
    assert_eq!(refused["reconcile"]["not_in_installation"], 1, "{status}");
    assert_eq!(refused["reconcile"]["other_installation"], 1, "{status}");
    let metrics = r.t.get("/metrics").await.body;
    let metrics = metrics.as_str().unwrap();
    assert!(
        metrics.contains("safe_outcomes_tenancy_refused_total{path=\"registration\",reason=\"other_installation\"} 2"),
        "{metrics}"
    );
    for text in [status.to_string(), metrics.to_string()] {
        for name in ["orga", "orgb", "secret", "stranger", "unlisted"] {
            assert!(!text.contains(name), "{name} in {text}");
        }
    }

    readers_of_a_see_nothing_of_b(&r).await;
}

/// A browser that follows no redirect by itself.
fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(Policy::none())
        .build()
        .unwrap()
}

fn header(r: &reqwest::Response, name: reqwest::header::HeaderName) -> String {
    r.headers()[name].to_str().unwrap().to_string()
}

/// Sign in as `login` through the OAuth web flow; the session cookie.
async fn sign_in(r: &Tester, login: &str) -> String {
    let base = r.t.server.url();
    let start = fetch(&browser(), format!("{base}/auth/login/github")).await;
    assert_eq!(start.status(), 303);
    let oauth = header(&start, SET_COOKIE);
    let oauth = oauth.split(';').next().unwrap().to_string();
    let back = browser()
        .get(header(&start, LOCATION))
        .header("x-fake-user", login)
        .send()
        .await
        .unwrap();
    assert_eq!(back.status(), 302);
    let callback = header(&back, LOCATION);
    let query = callback.split_once('?').unwrap().1;
    let done = browser()
        .get(format!("{base}/auth/callback?{query}"))
        .header(COOKIE, oauth)
        .send()
        .await
        .unwrap();
    assert_eq!(done.status(), 303, "{}", done.text().await.unwrap());
    let cookie = done
        .headers()
        .get_all(SET_COOKIE)
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .find(|v| v.starts_with("so_session="))
        .expect("a session cookie");
    cookie.split(';').next().unwrap().to_string()
}

/// GET `url` with the session cookie `session`; the body.
async fn read_as(url: String, session: &str) -> String {
    answers::text(browser().get(url).header(COOKIE, session)).await
}

/// Issue installation A's read token as `session` (who sees all of A).
async fn issue_token(r: &Tester, session: &str) -> String {
    let base = r.t.server.url();
    let page = read_as(format!("{base}/auth/tokens"), session).await;
    let at = page.find("name=\"csrf\"").expect("a token form");
    let value = &page[at..];
    let value = &value[value.find("value=\"").unwrap() + 7..];
    let csrf = &value[..value.find('"').unwrap()];
    let form = [("csrf", csrf), ("installation", &A.to_string())];
    let post = browser().post(format!("{base}/auth/tokens"));
    let issued = answers::text(post.header(COOKIE, session).form(&form)).await;
    let start = issued.find("<code>soi_").expect("a token") + "<code>".len();
    issued[start..start + issued[start..].find('<').unwrap()].to_string()
}

/// Path parameters naming B's things, and A's.
fn b_value(name: &str) -> String {
    match name {
        "owner" => "orgb".into(),
        "repo" => "secret".into(),
        "run_id" => "900".into(),
        "name" => "b-private-wf".into(),
        "id" => "orgb/secret:900:issue-7".into(),
        _ => "x".into(),
    }
}

fn a_value(name: &str) -> String {
    match name {
        "owner" => "orga".into(),
        "repo" => "app".into(),
        "run_id" => "100".into(),
        "name" => "a-wf".into(),
        "id" => format!("{A_APP}:100:0"),
        _ => "x".into(),
    }
}

/// A's viewer and A's token read every GET route with B's names and A's:
/// no answer holds any of B's marks the request did not name itself. A's
/// own outputs are there (so the reads really read), and B's viewer still
/// sees B's.
async fn readers_of_a_see_nothing_of_b(r: &Tester) {
    r.gh.add_user("alice", A, "orga", &[A_APP, A_TOOLS]);
    r.gh.add_user("bob", B, "orgb", &[B_SECRET]);
    let alice = sign_in(r, "alice").await;
    let token = issue_token(r, &alice).await;
    let base = r.t.server.url();
    let as_alice = |req: reqwest::RequestBuilder| req.header(COOKIE, alice.clone());
    let as_token = |req: reqwest::RequestBuilder| req.bearer_auth(token.clone());
    let readers: [(
        &str,
        &dyn Fn(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
    ); 2] = [("A's viewer", &as_alice), ("A's token", &as_token)];
    for (who, auth) in readers {
        let mine = answers::text(auth(browser().get(format!("{base}/api/v1/outputs")))).await;
        assert!(
            mine.contains(&format!("{A_APP}:100:0")),
            "{who} reads A: {mine}"
        );
    }
    let all = routes::of(&router(&r.t.app, r.options.clone()));
    let mut read = 0;
    for route in all.iter().filter(|r| r.methods.iter().any(|m| m == "GET")) {
        for path in [route.fill(b_value), route.fill(a_value)] {
            for (who, auth) in readers {
                let resp = auth(browser().get(format!("{base}{path}")))
                    .send()
                    .await
                    .unwrap();
                let status = resp.status().as_u16();
                let body = resp.text().await.unwrap();
                for mark in B_MARKS.iter().filter(|m| !path.contains(*m)) {
                    assert!(
                        !body.contains(mark),
                        "{who} GET {path} ({status}) shows {mark:?}:\n{body}"
                    );
                }
                read += 1;
            }
        }
    }
    assert!(read >= 40, "{read} reads");
    let bob = sign_in(r, "bob").await;
    let theirs = read_as(format!("{base}/api/v1/outputs"), &bob).await;
    assert!(theirs.contains("orgb/secret:900:issue-7"), "{theirs}");
    assert!(!theirs.contains("orga/"), "{theirs}");
}

/// Listen-only, with no installation known (no App credentials, only the
/// API token): the owner of the run's repository decides. Lines under that
/// owner are kept, whatever their repository; another owner's repository or
/// project, and a webhook fact under another owner's repository, are
/// refused with the reason and counted.
#[tokio::test]
async fn without_a_known_installation_the_owner_decides() {
    let dir = tempfile::tempdir().unwrap();
    let t = TestApp::start(dir.path(), common::t0()).await;
    let lines = [
        json!({"type": "create_issue", "repo": "acme/widgets", "number": 1,
               "url": "https://github.com/acme/widgets/issues/1"}),
        json!({"type": "add_comment", "repo": "acme/widgets", "commentId": 9, "number": 2,
               "url": "https://github.com/acme/docs/issues/2#issuecomment-9"}),
        json!({"type": "create_issue", "repo": "acme/widgets", "number": 3,
               "url": "https://github.com/globex/plans/issues/3"}),
        json!({"type": "update_project", "repo": "acme/widgets",
               "project": "https://github.com/orgs/globex/projects/4", "item_id": "PVTI_1"}),
        json!({"type": "update_project", "repo": "acme/widgets",
               "project": "https://github.com/orgs/acme/projects/5", "item_id": "PVTI_2"}),
    ];
    let a = t
        .client
        .post_manifest("acme/widgets", 7, Some("triage"), jsonl(&lines))
        .await
        .unwrap();
    assert_eq!(a.status, 202, "{}", a.body);
    assert_eq!(a.body["accepted"], 3, "{}", a.body);
    assert_eq!(a.body["outside_installation"], 2, "{}", a.body);
    for entry in a.body["rejected"].as_array().unwrap() {
        let error = entry["error"].as_str().unwrap();
        assert!(
            error.contains("globex") && error.contains("is not under acme"),
            "{entry}"
        );
    }
    let issue = |repo: &str, n: u64| {
        json!({"number": n, "title": "t",
        "html_url": format!("https://github.com/{repo}/issues/{n}"), "state": "open",
        "updated_at": common::at(3), "created_at": common::at(0)})
    };
    let sub = json!({"action": "sub_issue_added",
        "parent_issue": issue("acme/widgets", 5), "sub_issue": issue("globex/plans", 6),
        "repository": {"full_name": "acme/widgets"}, "sender": common::user("alice")});
    t.deliver_ok("sub_issues", "sub-1", &sub).await;
    t.settle().await;
    let stored: Vec<String> = t
        .app
        .store
        .outputs("", None)
        .map(|o| o.unwrap().execution.id)
        .collect();
    assert_eq!(
        stored,
        ["acme/widgets:7:0", "acme/widgets:7:1", "acme/widgets:7:4"],
        "{stored:?}"
    );
    let filed = t
        .app
        .store
        .observations(&["globex/plans#6".into()])
        .unwrap();
    assert!(filed.is_empty(), "{filed:?}");
    let status = t.get("/status").await.body;
    let refused = &status["tenancy"]["refused"];
    assert_eq!(refused["manifest"]["other_owner"], 2, "{status}");
    assert_eq!(refused["webhook"]["other_owner"], 1, "{status}");
    t.stop().await;
}
