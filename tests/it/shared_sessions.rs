//! Issue 24 §1: state every replica shares. Two real `serve` processes on
//! one PostgreSQL database sit behind a round-robin proxy written here (each
//! request to the next replica, no session affinity; the answer says which
//! replica served it). Through it, against the fake GitHub's OAuth endpoints:
//! a sign-in whose login and callback land on different replicas, ten page
//! loads alternating replicas, a read token issued on one replica, read and
//! revoked on the other, and a sign-out that both replicas see. Neither
//! replica has a `SESSION_SECRET`: they share the signing key the store keeps.
//!
//! Needs PostgreSQL (`common::pg`): `SAFE_OUTCOMES_TEST_PG`, else a cluster
//! of its own; without one it fails under CI and skips loudly otherwise.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::{CONTENT_LENGTH, COOKIE, HOST, LOCATION, TRANSFER_ENCODING};
use axum::response::Response;
use axum::Router;
use safe_outcomes::http::RunningServer;

use crate::common::pg::{self, Pg};
use crate::common::serve::ServeChild;
use crate::fake_github::users::{CLIENT_ID, CLIENT_SECRET};
use crate::fake_github::{self, FakeGitHub};
use crate::load::serve_on;
use crate::sign_in::{attribute_after, browser, fetch, set_cookie, token_in};

const SECRET: &str = "shared-sessions-secret";
const TOKEN: &str = "shared-sessions-token";

/// The round-robin proxy: the replicas' addresses and the next one's turn
/// (its client follows no redirect: the browser does).
struct Proxy {
    replicas: Mutex<Vec<String>>,
    turn: AtomicUsize,
    http: reqwest::Client,
}

/// Forward `req` to the next replica, as is; the answer gets `x-replica`.
async fn forward(State(proxy): State<Arc<Proxy>>, req: Request) -> Response {
    let (index, upstream) = {
        let replicas = proxy.replicas.lock().unwrap();
        let i = proxy.turn.fetch_add(1, Ordering::SeqCst) % replicas.len();
        (i, replicas[i].clone())
    };
    let (parts, body) = req.into_parts();
    let body = axum::body::to_bytes(body, 1 << 20).await.unwrap();
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let mut out = proxy
        .http
        .request(parts.method.clone(), format!("{upstream}{path}"))
        .body(body);
    for (k, v) in &parts.headers {
        if k != HOST && k != CONTENT_LENGTH {
            out = out.header(k, v);
        }
    }
    let answer = out.send().await.unwrap();
    let mut resp = Response::builder().status(answer.status());
    for (k, v) in answer.headers() {
        if k != TRANSFER_ENCODING && k != CONTENT_LENGTH {
            resp = resp.header(k, v);
        }
    }
    resp.header("x-replica", index.to_string())
        .body(Body::from(answer.bytes().await.unwrap()))
        .unwrap()
}

/// One replica in App mode on `database`, reached by users at `public`.
async fn replica(
    dir: &std::path::Path,
    gh: &FakeGitHub,
    key: &std::path::Path,
    public: &str,
    database: &str,
) -> ServeChild {
    let env = vec![
        ("APP_ID", "4242"),
        ("PRIVATE_KEY_PATH", key.to_str().unwrap()),
        ("GITHUB_API_URL", gh.url.as_str()),
        ("GITHUB_WEB_URL", gh.url.as_str()),
        ("GITHUB_CLIENT_ID", CLIENT_ID),
        ("GITHUB_CLIENT_SECRET", CLIENT_SECRET),
        ("WEBHOOK_SECRET", SECRET),
        ("API_TOKEN", TOKEN),
        ("PUBLIC_URL", public),
        ("REDELIVERY_INTERVAL_SECS", "0"),
        ("LOG_LEVEL", "warn"),
    ];
    serve_on(dir, env, Some(database)).await
}

/// A request through the proxy: its status, replica, headers and body.
struct Answer {
    status: u16,
    replica: String,
    cookie: Option<String>,
    location: Option<String>,
    body: String,
}

async fn through(req: reqwest::RequestBuilder) -> Answer {
    let r = req.send().await.unwrap();
    let replica = r.headers()["x-replica"].to_str().unwrap().to_string();
    let cookie = set_cookie(&r, "so_session");
    let location = r
        .headers()
        .get(LOCATION)
        .map(|v| v.to_str().unwrap().to_string());
    Answer {
        status: r.status().as_u16(),
        replica,
        cookie,
        location,
        body: r.text().await.unwrap(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_tokens_and_sign_out_hold_across_replicas_without_affinity() {
    let Some(pg) = Pg::get("shared_sessions") else {
        return;
    };
    let name = pg::database_name("so_shared_sessions");
    let database = pg.fresh_database(&name);
    let dir = tempfile::tempdir().unwrap();
    let key = crate::common::write_app_key(dir.path());
    let gh = FakeGitHub::start().await;
    gh.add_user("alice", 1, "acme", &["acme/widgets", "acme/docs"]);

    let proxy = Arc::new(Proxy {
        replicas: Mutex::default(),
        turn: AtomicUsize::new(0),
        http: browser(),
    });
    let router = Router::new().fallback(forward).with_state(proxy.clone());
    let front = RunningServer::start(router, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let public = front.url();
    let mut a = replica(&dir.path().join("a"), &gh, &key, &public, &database).await;
    let mut b = replica(&dir.path().join("b"), &gh, &key, &public, &database).await;
    *proxy.replicas.lock().unwrap() = vec![a.url.clone(), b.url.clone()];
    let web = browser();

    // The App's installation and one output on each of two repositories.
    let sender = safe_outcomes::ingest::client::Client::new(
        &public,
        Some(SECRET.into()),
        Some(TOKEN.into()),
    );
    let installed = serde_json::json!({
        "action": "created",
        "installation": {"id": 1, "account": {"login": "acme", "id": 101}},
        "repositories": [{"full_name": "acme/widgets"}, {"full_name": "acme/docs"}, {"full_name": "acme/ops"}],
        "sender": crate::common::user("admin"),
    });
    let a1 = sender
        .deliver("installation", "inst-1", installed.to_string().as_bytes())
        .await
        .unwrap();
    assert!(a1.status < 300, "{}", a1.body);
    for (run, repo) in [(1, "acme/widgets"), (2, "acme/ops")] {
        crate::common::post_issue_five(&sender, repo, run).await;
    }
    let mut stored = false;
    for _ in 0..240 {
        let all = through(
            web.get(format!("{public}/api/v1/outputs"))
                .bearer_auth(TOKEN),
        )
        .await;
        if all.body.matches("safe_output_id").count() == 2 {
            stored = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(
        stored,
        "the outputs were not stored\n{}\n{}",
        a.output(),
        b.output()
    );

    // Sign-in: the login on one replica, GitHub's callback on the other.
    let r = fetch(&web, format!("{public}/auth/login/github?next=/api/v1/me")).await;
    assert_eq!(r.status(), 303);
    let started_on = r.headers()["x-replica"].to_str().unwrap().to_string();
    let oauth = format!("so_oauth={}", set_cookie(&r, "so_oauth").unwrap());
    let authorize = r.headers()[LOCATION].to_str().unwrap().to_string();
    let back = web
        .get(&authorize)
        .header("x-fake-user", "alice")
        .send()
        .await
        .unwrap();
    let callback = back.headers()[LOCATION].to_str().unwrap().to_string();
    assert!(
        callback.starts_with(&format!("{public}/auth/callback?")),
        "{callback}"
    );
    let done = through(web.get(&callback).header(COOKIE, &oauth)).await;
    assert_ne!(
        done.replica, started_on,
        "the callback landed on the other replica"
    );
    assert_eq!(done.status, 303, "{}", done.body);
    assert_eq!(done.location.as_deref(), Some("/api/v1/me"));
    let session = format!("so_session={}", done.cookie.expect("a session cookie"));

    // Ten page loads, alternating replicas: the same viewer on each.
    let mut served = Vec::new();
    for i in 0..10 {
        let path = if i % 2 == 0 {
            "/workflows"
        } else {
            "/api/v1/me"
        };
        let page = through(web.get(format!("{public}{path}")).header(COOKIE, &session)).await;
        assert_eq!(
            page.status, 200,
            "{path} on replica {}: {}",
            page.replica, page.body
        );
        if path == "/api/v1/me" {
            assert!(page.body.contains("\"login\":\"alice\""), "{}", page.body);
            assert!(!page.body.contains("acme/ops"), "{}", page.body);
        }
        served.push(page.replica);
    }
    assert!(
        served.windows(2).all(|w| w[0] != w[1]),
        "alternating: {served:?}"
    );

    // A read token issued on one replica reads on the other, and a revoke
    // on either is seen by both.
    let tokens = through(
        web.get(format!("{public}/auth/tokens"))
            .header(COOKIE, &session),
    )
    .await;
    assert_eq!(tokens.status, 200, "{}", tokens.body);
    let csrf = attribute_after(&tokens.body, "name=\"csrf\"", "value");
    let issued = through(
        web.post(format!("{public}/auth/tokens"))
            .header(COOKIE, &session)
            .form(&[("csrf", csrf.as_str()), ("installation", "1")]),
    )
    .await;
    assert_eq!(issued.status, 200, "{}", issued.body);
    let token = token_in(&issued.body);
    let read_with_token = || {
        through(
            web.get(format!("{public}/api/v1/outputs"))
                .bearer_auth(&token),
        )
    };
    for _ in 0..2 {
        let read = read_with_token().await;
        assert_eq!(read.status, 200, "replica {}: {}", read.replica, read.body);
        assert!(
            read.body.contains("acme/widgets") && !read.body.contains("acme/ops"),
            "{}",
            read.body
        );
    }
    let digest = safe_outcomes::http::auth::signed::digest(&token);
    let revoked = through(
        web.post(format!("{public}/auth/tokens/revoke"))
            .header(COOKIE, &session)
            .form(&[("csrf", csrf.as_str()), ("token", digest.as_str())]),
    )
    .await;
    assert_eq!(revoked.status, 200, "{}", revoked.body);
    for _ in 0..2 {
        let read = read_with_token().await;
        assert_eq!(read.status, 401, "replica {}: {}", read.replica, read.body);
    }

    // Sign-out on one replica, seen by both.
    let form = through(
        web.get(format!("{public}/auth/logout"))
            .header(COOKIE, &session),
    )
    .await;
    let csrf = attribute_after(&form.body, "name=\"csrf\"", "value");
    let out = through(
        web.post(format!("{public}/auth/logout"))
            .header(COOKIE, &session)
            .form(&[("csrf", csrf.as_str())]),
    )
    .await;
    assert_ne!(out.replica, form.replica);
    assert_eq!(out.status, 303);
    let mut refused_on = Vec::new();
    for _ in 0..2 {
        let after = through(
            web.get(format!("{public}/api/v1/me"))
                .header(COOKIE, &session),
        )
        .await;
        assert_eq!(
            after.status, 401,
            "replica {}: {}",
            after.replica, after.body
        );
        refused_on.push(after.replica);
    }
    assert_ne!(refused_on[0], refused_on[1]);

    a.terminate().await;
    b.terminate().await;
    front.stop().await;
    pg.drop_database(&name);
}

/// The per-installation token cache's invalidation is shared: two clients
/// on one store (two replicas) each mint once; when one forgets the
/// installation (or an installation change marks it), the other mints
/// anew at its next call.
#[tokio::test]
async fn a_stale_installation_token_is_minted_again_by_every_replica() {
    use safe_outcomes::github::client::Endpoint;
    use safe_outcomes::github::RetryPolicy;
    let dir = tempfile::tempdir().unwrap();
    let store = safe_outcomes::store::Store::open(dir.path()).unwrap();
    let gh = FakeGitHub::start().await;
    let replica = || {
        let c = gh.client(Default::default(), RetryPolicy::default());
        c.watch_marks(store.clone());
        c
    };
    let (a, b) = (replica(), replica());
    async fn call(c: &safe_outcomes::github::client::GitHubClient) {
        const RATE: Endpoint = Endpoint::idempotent("rate_limit.get");
        c.call(1, RATE, |crab| async move {
            crab._get("/rate_limit").await.map(|_| ())
        })
        .await
        .unwrap();
    }
    for _ in 0..2 {
        call(&a).await;
        call(&b).await;
    }
    assert_eq!(gh.calls(fake_github::TOKENS), 2, "one token per replica");
    a.forget(1);
    call(&b).await;
    assert_eq!(
        gh.calls(fake_github::TOKENS),
        3,
        "the other replica mints anew"
    );
    call(&a).await;
    call(&a).await;
    call(&b).await;
    assert_eq!(gh.calls(fake_github::TOKENS), 4);
}
