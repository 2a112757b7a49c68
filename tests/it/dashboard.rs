//! The dashboard over the demo scenario, through the real router.
//!
//! Without a browser: every page answers HTML with the report's numbers, in
//! one template with a served stylesheet and no inline style or script; a
//! request without a reader gets the HTML sign-in page; an unknown parameter
//! is a 400 page; the read API says when each output's next window is due.
//!
//! In headless Chromium (`browser`): every page loads at 1200 px and at
//! 390 px with no console error and no horizontal scroll (of the page or of
//! a table), the numbers in the DOM equal `/api/v1/report`'s and
//! `/api/v1/series`', and a screenshot of each page is saved under
//! `target/dashboard-screenshots/`. Then the questions an admin comes with,
//! asked as a person would, at both widths: from the overview, one click to
//! the rejected outputs, counted against the API; a pending output's due
//! time; the trend at a mature window, and immature weeks marked; the check
//! run's link followed to the PR page.

use std::path::Path;

use serde_json::{json, Value};

use crate::answers;
use crate::browser::Browser;
use crate::common::{self, TestApp};
use safe_outcomes::http::dashboard::chart;
use safe_outcomes::ingest::client::parse_scenario;
use safe_outcomes::ingest::client::DEMO_SCENARIO as SCENARIO;

const PAGES: [(&str, &str); 7] = [
    ("overview", "/"),
    ("workflows", "/workflows"),
    ("workflow", "/workflows/ci-coach"),
    ("run", "/runs/acme/widgets/5101"),
    ("output", "/outputs/acme/widgets:2106:0"),
    ("outputs", "/outputs?status=rejected"),
    ("pull-request", "/prs/acme/widgets/66"),
];

/// The demo stopped after its October steps (before its outputs of November
/// and its last jump in time, to Nov 21): its last outputs are hours old,
/// many windows still to come.
async fn young_demo_app(dir: &Path) -> TestApp {
    let steps = parse_scenario(SCENARIO).unwrap();
    let november: chrono::DateTime<chrono::Utc> = "2026-11-01T00:00:00Z".parse().unwrap();
    let last = steps.iter().position(|s| s.at() >= november).unwrap();
    assert!(steps[last..]
        .iter()
        .any(|s| matches!(s, safe_outcomes::ingest::client::Step::Advance { .. })));
    let t = TestApp::start(dir, steps[0].at()).await;
    t.play(&steps[..last]).await;
    t.settle().await;
    t
}

async fn page(t: &TestApp, path: &str, token: Option<&str>) -> (u16, String) {
    let req = reqwest::Client::new().get(format!("{}{path}", t.server.url()));
    let r = answers::bearer(req, token).send().await.unwrap();
    let status = r.status().as_u16();
    let ct = r
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string());
    assert_eq!(ct.as_deref(), Some("text/html; charset=utf-8"), "{path}");
    (status, r.text().await.unwrap())
}

#[tokio::test]
async fn every_page_answers_html_and_refusals_are_pages_too() {
    let (_dir, t) = TestApp::fresh_demo().await;
    let report = t.get("/api/v1/report").await.body;
    for (name, path) in PAGES {
        let (status, html) = page(&t, path, Some(common::TOKEN)).await;
        assert_eq!(status, 200, "{name}: {html}");
        // Under a strict CSP: no script, no inline style; the served sheet.
        for inline in ["<script", "<style", "style=", "src=\"data:", "href=\"data:"] {
            assert!(!html.contains(inline), "{name}: {inline}");
        }
        assert!(
            html.contains("<link rel=\"stylesheet\" href=\"/assets/dashboard.css?v="),
            "{name}"
        );
        assert!(
            html.contains("Reading with the API token"),
            "{name}: who is reading"
        );
        let (status, html) = page(&t, path, None).await;
        assert_eq!(status, 401, "{name}");
        // The sign-in link comes back to this page.
        let back = serde_urlencoded::to_string([("next", path)]).unwrap();
        assert!(
            html.contains(&format!("href=\"/auth/login?{back}\"")),
            "{name}: {html}"
        );
        assert!(html.contains(">Sign in<"), "{name}");
        assert!(
            !html.contains("acme/"),
            "{name}: no repository before sign-in"
        );
        let (status, _) = page(&t, path, Some("wrong")).await;
        assert_eq!(status, 401, "{name}");
    }
    let (_, overview) = page(&t, "/", Some(common::TOKEN)).await;
    let strong = report["totals"]["accepted_strong"].as_u64().unwrap();
    assert!(
        overview.contains(&format!("data-field=\"accepted_strong\">{strong}<")),
        "{overview}"
    );
    for path in ["/?wokflow=x", "/workflows?since=yesterday"] {
        let (status, html) = page(&t, path, Some(common::TOKEN)).await;
        assert_eq!(status, 400, "{path}");
        assert!(html.contains("class=\"error\""), "{html}");
    }
    let (status, _) = page(&t, "/outputs/acme/widgets:9:9", Some(common::TOKEN)).await;
    assert_eq!(status, 404);
    // A PR no output touched, and bad list parameters, are pages too.
    let (status, _) = page(&t, "/prs/acme/widgets/9999", Some(common::TOKEN)).await;
    assert_eq!(status, 404);
    for path in [
        "/outputs?count=merged",
        "/outputs?awaiting=2d",
        "/outputs?sort=size",
        "/outputs?page=0",
        "/?window=2d",
    ] {
        let (status, html) = page(&t, path, Some(common::TOKEN)).await;
        assert_eq!(status, 400, "{path}");
        assert!(html.contains("class=\"error\""), "{html}");
    }
    // The stylesheet is served, cacheable.
    let css = reqwest::get(format!("{}/assets/dashboard.css", t.server.url()))
        .await
        .unwrap();
    assert_eq!(css.status(), 200);
    assert_eq!(css.headers()["content-type"], "text/css; charset=utf-8");
    // An empty field of the filter form is no cut.
    let (status, _) = page(&t, "/?repo=&since=&workflow=ci-coach", Some(common::TOKEN)).await;
    assert_eq!(status, 200);
    t.stop().await;
}

#[tokio::test]
async fn every_page_in_headless_chromium_shows_the_apis_numbers_at_1200_and_390_px() {
    let Some((browser, _dir, t)) = Browser::on_demo().await else {
        return;
    };
    for width in [1200u32, 390] {
        browser.width(width).await;
        for (name, path) in PAGES {
            browser.open(&format!("{}{path}", t.server.url())).await;
            let title = browser.js("return document.title").await;
            assert!(
                !title.as_str().unwrap().starts_with("Sign in"),
                "{name}: {title}"
            );
            assert_eq!(
                browser.console_errors().await,
                Vec::<String>::new(),
                "{name}: no console error (a CSP violation is one)"
            );
            if let Some(wide) = browser.too_wide().await {
                panic!("{name} at {width} px scrolls sideways: {wide}");
            }
            // The served stylesheet applied (the template's header is a flex row).
            let styled = browser
                .js("return getComputedStyle(document.querySelector('header.top')).display")
                .await;
            assert_eq!(styled, "flex", "{name}: the stylesheet is not applied");
            browser.screenshot(&format!("{name}-{width}.png")).await;
        }
    }
    check_overview_numbers(&t, &browser).await;
    browser.quit().await;
    t.stop().await;
}

/// The overview's counts, rates and chart against the API's answers.
async fn check_overview_numbers(t: &TestApp, browser: &Browser) {
    browser
        .call("/url", json!({"url": format!("{}/", t.server.url())}))
        .await;
    let report = t.get("/api/v1/report").await.body;
    let dom = browser
        .js(
            "const o = {}; document.querySelectorAll('#totals [data-field], #apart [data-field], #also [data-field]')
               .forEach(e => o[e.dataset.field] = Number(e.textContent)); return o;",
        )
        .await;
    let fields = dom.as_object().unwrap();
    assert!(fields.len() >= 13, "{dom}");
    for (field, value) in fields {
        assert_eq!(value, &report["totals"][field], "{field}");
    }
    let types = browser
        .js(
            "const o = {}; document.querySelectorAll('#by-type tr[data-type]').forEach(r => {
               const row = {}; r.querySelectorAll('[data-field]').forEach(c =>
                 { row[c.dataset.field] = c.dataset.value === undefined ? Number(c.textContent)
                   : (c.dataset.value === '' ? null : Number(c.dataset.value));
                   if (c.dataset.rate !== undefined) row.rejection_rate = c.dataset.rate === '' ? null : Number(c.dataset.rate); });
               o[r.dataset.type] = row; }); return o;",
        )
        .await;
    let by_type = report["by_type"].as_object().unwrap();
    assert_eq!(types.as_object().unwrap().len(), by_type.len(), "{types}");
    for (name, stats) in by_type {
        for field in [
            "total_safe_outputs",
            "strict_acceptance_rate",
            "human_check_acceptance_rate",
            "sticky_artifact_rate",
            "rejection_rate",
        ] {
            let (dom, api) = (&types[name][field], &stats[field]);
            match (dom.as_f64(), api.as_f64()) {
                (Some(d), Some(a)) => assert!((d - a).abs() < 1e-9, "{name} {field}"),
                _ => assert_eq!(dom, api, "{name} {field}"),
            }
        }
    }
    check_chart(t, browser, "").await;
}

/// The chart shown (wide or narrow) against `/api/v1/series?{query}`: one
/// marker per rated week in each series, at the same window, each with a
/// title; the table's rows with their counts; immature weeks marked alike.
async fn check_chart(t: &TestApp, browser: &Browser, query: &str) -> Value {
    let series = t.get(&format!("/api/v1/series?by=week&{query}")).await.body;
    let periods = series["periods"].as_array().unwrap();
    let window = series["window"].as_str().unwrap();
    let shown = browser
        .js("return [...document.querySelectorAll('#weekly-chart svg.chart')].find(s => s.getBoundingClientRect().width > 0).classList[1]")
        .await;
    let svg = format!("#weekly-chart svg.{}", shown.as_str().unwrap());
    let page = browser
        .js(&format!(
            "return {{window: document.querySelector('#weeks').dataset.window,
                     rows: document.querySelectorAll('#weekly tr[data-week]').length,
                     immature: [...document.querySelectorAll('#weekly tr[data-immature=true]')].map(r => r.dataset.week),
                     titled: [...document.querySelectorAll('{svg} g.point')].every(g => g.querySelector('title').textContent.includes('at T+{window}')),
                     role: document.querySelector('{svg}').getAttribute('role')}}"
        ))
        .await;
    assert_eq!(page["window"], window, "{page}");
    assert_eq!(page["rows"], periods.len());
    assert_eq!(page["titled"], true, "every marker has its words");
    assert_eq!(page["role"], "img");
    let immature: Vec<&Value> = periods
        .iter()
        .filter(|p| p["immature"] == true)
        .map(|p| &p["week"])
        .collect();
    assert_eq!(
        page["immature"]
            .as_array()
            .unwrap()
            .iter()
            .collect::<Vec<_>>(),
        immature
    );
    for line in chart::SERIES {
        let rated: Vec<&Value> = periods
            .iter()
            .filter(|p| !p[line.field].is_null())
            .map(|p| &p["week"])
            .collect();
        let points = browser
            .js(&format!(
                "return [...document.querySelectorAll('{svg} g[data-series={}] g.point')].map(g => g.dataset.week)",
                line.name
            ))
            .await;
        assert_eq!(
            points.as_array().unwrap().iter().collect::<Vec<_>>(),
            rated,
            "{}: one marker per rated week",
            line.name
        );
        let hollow = browser
            .js(&format!(
                "return [...document.querySelectorAll('{svg} g[data-series={}] g.point[data-immature=true]')].length",
                line.name
            ))
            .await;
        let rated_immature = periods
            .iter()
            .filter(|p| !p[line.field].is_null() && p["immature"] == true)
            .count();
        assert_eq!(hollow, rated_immature, "{}", line.name);
    }
    series
}

/// Strings in the store meant to plant markup or a script link on a page.
const HOSTILE: [&str; 3] = [
    "<img src=x onerror=alert(1)>",
    "\"><script>alert(1)</script>",
    "x' onmouseover='alert(1)",
];

#[tokio::test]
async fn hostile_strings_in_the_store_render_inert_on_every_page() {
    use crate::injection;

    let dir = tempfile::tempdir().unwrap();
    let t = TestApp::start(dir.path(), common::t0()).await;
    let line = json!({"type": "create_issue", "number": 7, "url": "javascript:alert(1)"});
    let mut records = injection::records_named(&line, &HOSTILE);
    for r in &mut records {
        r.target.as_mut().unwrap().url = Some("javascript:alert(1)".into());
    }
    injection::file_directly(&t, records).await;
    t.settle().await;
    let mut paths = vec![
        "/".to_string(),
        "/workflows".into(),
        "/runs/acme/widgets/9".into(),
        "/outputs".into(),
        "/outputs?repo=acme/widgets&run=9&window=1h".into(),
    ];
    for (n, h) in HOSTILE.iter().enumerate() {
        let id = format!("acme/widgets:9:{n}{h}");
        paths.push(safe_outcomes::http::dashboard::output_path(&id));
        paths.push(format!(
            "/workflows/{}",
            safe_outcomes::model::escape::url_path(h).replace('/', "%2F")
        ));
    }
    for path in paths {
        let (status, html) = page(&t, &path, Some(common::TOKEN)).await;
        assert_eq!(status, 200, "{path}: {html}");
        for planted in ["<img", "<script", "href=\"javascript:"] {
            assert!(!html.contains(planted), "{planted} on {path}:\n{html}");
        }
    }
    t.stop().await;
}

/// The read API behind the pages: each output's schedule (its next window
/// and when it is due, or that its verdict is final), the report per
/// workflow, and rates at a fixed maturity — as rules over every output.
#[tokio::test]
async fn the_api_says_when_each_output_is_judged_next_and_reads_trends_at_one_window() {
    let dir = tempfile::tempdir().unwrap();
    let t = young_demo_app(dir.path()).await;
    let now = t.clock.now();
    let hours = |w: &str| match w {
        "1h" => 1,
        "24h" => 24,
        "7d" => 168,
        _ => 720,
    };
    let outcomes = t.outcomes().await;
    let (mut waiting, mut finals) = (0, 0);
    for (id, o) in &outcomes {
        let path = format!(
            "/api/v1/outputs/{}",
            safe_outcomes::model::escape::url_path(id)
        );
        let s = t.get(&path).await.body["schedule"].clone();
        let next = ["1h", "24h", "7d", "30d"]
            .into_iter()
            .find(|w| !o.windows.contains_key(w));
        assert_eq!(s["next_window"].as_str(), next, "{id}: {s}");
        assert_eq!(s["verdict_final"], next.is_none(), "{id}");
        match next {
            Some(w) => {
                waiting += 1;
                let due: chrono::DateTime<chrono::Utc> =
                    s["next_window_due_at"].as_str().unwrap().parse().unwrap();
                assert_eq!(
                    due,
                    o.created_at + chrono::Duration::hours(hours(w)),
                    "{id}"
                );
                // Not yet recorded: due after now (the worker is idle).
                assert!(due > now, "{id}: {due} <= {now}");
            }
            None => finals += 1,
        }
    }
    assert!(
        waiting > 0,
        "the young demo has outputs to judge: {waiting} {finals}"
    );
    // The report per workflow adds up to its totals, at any window.
    for window in ["", "window=7d", "window=mature", "window=latest"] {
        let r = t.get(&format!("/api/v1/report?{window}")).await.body;
        let workflows = r["by_workflow"].as_object().unwrap().values();
        let per = common::total(workflows, |s| &s["total_safe_outputs"]);
        assert_eq!(
            per,
            r["totals"]["total_safe_outputs"].as_u64().unwrap(),
            "{window}"
        );
        let reached = r["totals"]["total_safe_outputs"].as_u64().unwrap()
            + r["not_yet_at_window"].as_u64().unwrap();
        assert_eq!(reached as usize, outcomes.len(), "{window}");
    }
    // The series: the default window is the latest every output in the range
    // reached; immature weeks are those with outputs not at the window yet.
    for query in ["", "window=24h", "window=30d"] {
        let series = t.get(&format!("/api/v1/series?{query}")).await.body;
        let window = series["window"].as_str().unwrap();
        if query.is_empty() {
            let all_reached = |w: &str| outcomes.values().all(|o| o.windows.contains_key(w));
            let expected = ["30d", "7d", "24h", "1h"]
                .into_iter()
                .find(|w| all_reached(w))
                .unwrap_or("1h");
            assert_eq!(window, expected);
            assert_eq!(series["window_chosen"], "default");
        } else {
            assert_eq!(format!("window={window}"), query);
        }
        for p in series["periods"].as_array().unwrap() {
            let not_yet = p["not_yet_at_window"].as_u64().unwrap();
            assert_eq!(p["immature"], not_yet > 0, "{p}");
            assert_eq!(
                p["total_safe_outputs"].as_u64().unwrap() + not_yet,
                outcomes
                    .values()
                    .filter(|o| o.created_at
                        >= p["period_start"]
                            .as_str()
                            .unwrap()
                            .parse::<chrono::DateTime<chrono::Utc>>()
                            .unwrap()
                        && o.created_at
                            < p["period_end"]
                                .as_str()
                                .unwrap()
                                .parse::<chrono::DateTime<chrono::Utc>>()
                                .unwrap())
                    .count() as u64
            );
        }
    }
    let bad = t.get("/api/v1/series?window=2d").await;
    assert_eq!(bad.status, 400);
    t.stop().await;
}

/// Open the overview at `width`, as the API token's holder.
async fn overview_at(browser: &Browser, t: &TestApp, width: u32) {
    browser.width(width).await;
    browser.open(&format!("{}/", t.server.url())).await;
}

/// The output ids a list page shows.
async fn listed(browser: &Browser) -> Vec<String> {
    let ids = browser
        .js("return [...document.querySelectorAll('#outputs tbody tr')].map(r => r.dataset.output)")
        .await;
    let mut ids: Vec<String> = serde_json::from_value(ids).unwrap();
    ids.sort();
    ids
}

/// The ids `/api/v1/outputs?{query}` answers.
async fn api_ids(t: &TestApp, query: &str) -> Vec<String> {
    let items = t
        .get(&format!("/api/v1/outputs?limit=1000&{query}"))
        .await
        .body;
    let mut ids: Vec<String> = items["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["safe_output_id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn an_admins_questions_are_answered_in_a_click_or_two_in_chromium() {
    let Some((browser, _dir, t)) = Browser::on_demo().await else {
        return;
    };
    for width in [1200u32, 390] {
        // "Show me the rejected ones": one click from the overview.
        overview_at(&browser, &t, width).await;
        browser
            .click("#totals a.card:has(b[data-field=rejected])")
            .await;
        assert!(
            browser.url().await.contains("/outputs?status=rejected"),
            "{}",
            browser.url().await
        );
        let rows = listed(&browser).await;
        assert_eq!(rows, api_ids(&t, "status=rejected").await);
        let report = t.get("/api/v1/report").await.body;
        assert_eq!(
            rows.len() as u64,
            report["totals"]["rejected"].as_u64().unwrap()
        );
        assert!(
            browser.too_wide().await.is_none(),
            "{:?}",
            browser.too_wide().await
        );
        browser
            .screenshot(&format!("question-rejected-{width}.png"))
            .await;
        // Every count of the overview is a door: each list holds its count.
        overview_at(&browser, &t, width).await;
        let doors = browser
            .js("return [...document.querySelectorAll('#totals a.card, #apart a.card, #also a.card')].map(a => [a.querySelector('b').dataset.field, Number(a.querySelector('b').textContent), a.getAttribute('href')])")
            .await;
        for door in doors.as_array().unwrap() {
            browser
                .open(&format!("{}{}", t.server.url(), door[2].as_str().unwrap()))
                .await;
            let total = browser
                .js("return Number(document.querySelector('#total').dataset.total)")
                .await;
            assert_eq!(total, door[1], "{door}");
        }
        // "Is it getting better?": the trend at the mature window, then at 30d.
        overview_at(&browser, &t, width).await;
        let series = check_chart(&t, &browser, "").await;
        assert_eq!(
            series["window"], "24h",
            "the demo's youngest output (in flight, 34 hours old) has reached T+24h, not T+7d"
        );
        browser
            .click("select[name=window] option[value='30d']")
            .await;
        browser.click("form.filters button[type=submit]").await;
        let url = browser.url().await;
        assert!(url.contains("window=30d"), "{url}");
        let series = check_chart(&t, &browser, "window=30d").await;
        assert!(
            series["periods"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["immature"] == true),
            "at 30d the weeks of the outputs in flight are immature"
        );
        browser
            .screenshot(&format!("question-trend-{width}.png"))
            .await;
    }
    t.stop().await;

    // "When will this be judged?": a pending output's due time, from the overview.
    let dir = tempfile::tempdir().unwrap();
    let t = young_demo_app(dir.path()).await;
    for width in [1200u32, 390] {
        overview_at(&browser, &t, width).await;
        check_chart(&t, &browser, "").await;
        // At 7d, the last days' outputs are not there yet: their week is
        // marked immature in the chart and its table.
        browser
            .open(&format!("{}/?window=7d", t.server.url()))
            .await;
        let series = check_chart(&t, &browser, "window=7d").await;
        assert!(series["periods"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["immature"] == true));
        browser
            .screenshot(&format!("question-immature-{width}.png"))
            .await;
        overview_at(&browser, &t, width).await;
        browser
            .click("#totals a.card:has(b[data-field=pending])")
            .await;
        let rows = listed(&browser).await;
        assert_eq!(rows, api_ids(&t, "status=pending").await);
        browser
            .click("#outputs tbody tr:has([data-next-window]) td a[href^='/outputs/']")
            .await;
        let shown = browser
            .js("const p = document.querySelector('#next-window'); return [document.querySelector('#output-id code').textContent, p.dataset.window, p.dataset.due, p.querySelector('.due').textContent]")
            .await;
        let id = shown[0].as_str().unwrap().to_string();
        let api = t
            .client
            .get(&format!(
                "/api/v1/outputs/{}",
                safe_outcomes::model::escape::url_path(&id)
            ))
            .await
            .unwrap()
            .body;
        assert_eq!(api["outcome"]["outcome_status"], "pending", "{id}");
        assert_eq!(shown[1], api["schedule"]["next_window"], "{shown}");
        let due: chrono::DateTime<chrono::Utc> = api["schedule"]["next_window_due_at"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        let on_page: chrono::DateTime<chrono::Utc> = shown[2].as_str().unwrap().parse().unwrap();
        assert_eq!(on_page, due);
        assert!(
            shown[3]
                .as_str()
                .unwrap()
                .starts_with(&due.format("%b %-d").to_string()),
            "{shown}"
        );
        assert!(browser.too_wide().await.is_none());
        browser
            .screenshot(&format!("question-due-{width}.png"))
            .await;
    }
    t.stop().await;
    browser.quit().await;
}

/// The check run of a PR several runs touched links its PR page, and the
/// page says what the check run says.
#[tokio::test]
async fn the_check_runs_link_opens_the_pull_request_page_in_chromium() {
    use crate::fake_github::{recorded_policy, FakeGitHub, Sleeps};
    use safe_outcomes::app::GitHubConfig;
    use safe_outcomes::github::publisher::PublisherOptions;
    use safe_outcomes::http::RouterOptions;
    use safe_outcomes::model::clock::Clock;
    use std::time::Duration;

    const PUBLIC_URL: &str = "https://outcomes.example";
    let Some(browser) = Browser::with_token(common::TOKEN).await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let gh = FakeGitHub::start().await;
    let steps = parse_scenario(SCENARIO).unwrap();
    let clock = Clock::manual(steps[0].at());
    let sleeps = Sleeps::default();
    let mut github =
        GitHubConfig::new(gh.client_factory(recorded_policy(&sleeps, clock.clone(), 2)));
    // Only the explicit flush publishes, after the scenario: PR 66 is
    // merged by then, so check runs on closed PRs are asked for.
    github.publisher = Some(PublisherOptions {
        debounce: Duration::from_secs(3600),
        retry_min: Duration::from_secs(3600),
        closed_prs: true,
        ..PublisherOptions::new(PUBLIC_URL)
    });
    let running = common::launch(dir.path(), &clock, github);
    let publisher = running.publisher.expect("the publisher runs");
    let t = TestApp::serve(running.app, clock, dir.path(), RouterOptions::default()).await;
    let install = crate::payloads::installation_created(4242, "acme/widgets");
    t.deliver_ok("installation", "install-1", &install).await;
    t.play(&steps).await;
    t.settle().await;
    publisher.flush().await;
    let run = gh
        .check_runs()
        .into_iter()
        .filter(|r| r.external_id.as_deref() == Some("acme/widgets#66"))
        .max_by_key(|r| r.id)
        .expect("PR 66 has a check run");
    let summary = run.summary.clone().unwrap();
    let pr_page = format!("{PUBLIC_URL}/prs/acme/widgets/66");
    assert_eq!(
        run.details_url.as_deref(),
        Some(pr_page.as_str()),
        "two runs touched PR 66"
    );
    assert!(summary.contains(&format!("]({pr_page})")), "{summary}");
    let mut in_summary: Vec<String> = summary
        .split(&format!("]({PUBLIC_URL}/outputs/"))
        .skip(1)
        .map(|rest| rest.split(')').next().unwrap().to_string())
        .collect();
    in_summary.sort();
    assert!(in_summary.len() >= 2, "{summary}");
    for width in [1200u32, 390] {
        browser.width(width).await;
        let link = run
            .details_url
            .as_deref()
            .unwrap()
            .replace(PUBLIC_URL, &t.server.url());
        browser.open(&link).await;
        let page = browser
            .js("return [document.querySelector('#check-title').textContent,
                         [...document.querySelectorAll('#check-rows tr[data-output]')].map(r => r.dataset.output).sort()]")
            .await;
        assert_eq!(page[0], run.title.clone().unwrap(), "the check run's title");
        let rows: Vec<String> = serde_json::from_value(page[1].clone()).unwrap();
        assert_eq!(rows, in_summary, "the check run's rows");
        // Each row opens its output; the runs that touched the PR are linked.
        let runs = browser
            .js("return [...document.querySelectorAll('main a[href^=\"/runs/\"]')].map(a => a.getAttribute('href'))")
            .await;
        for r in ["/runs/acme/widgets/5101", "/runs/acme/widgets/5102"] {
            assert!(
                runs.as_array().unwrap().iter().any(|h| h == r),
                "{r}: {runs}"
            );
        }
        assert!(browser.too_wide().await.is_none());
        assert_eq!(browser.console_errors().await, Vec::<String>::new());
        browser
            .screenshot(&format!("question-check-run-pr-{width}.png"))
            .await;
    }
    publisher.stop().await;
    t.stop().await;
    browser.quit().await;
}
