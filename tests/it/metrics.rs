//! `/metrics` in OpenMetrics text: the counters, and the outputs gauge by
//! status, strength, type and (opted in) workflow, with no repository names;
//! only for a bearer, or on a listener of its own. A scraper that prefers
//! `text/plain` gets the same samples in the Prometheus text format 0.0.4
//! (`promtool check metrics` lints both in CI, scripts/real-clients).

use crate::common::{self, TestApp, TOKEN};
use safe_outcomes::http::{MetricsOptions, RouterOptions};
use std::collections::BTreeSet;

/// An App whose `/metrics` takes `metrics`, with three outputs of `triage`.
async fn app_with_outputs(dir: &std::path::Path, metrics: MetricsOptions) -> TestApp {
    let options = RouterOptions {
        metrics,
        ..RouterOptions::default()
    };
    let t = TestApp::start_with_options(dir, common::t0(), true, options).await;
    let lines = [
        r#"{"type":"create_issue","url":"https://github.com/acme/widgets/issues/7","number":7}"#,
        r#"{"type":"create_issue","url":"https://github.com/acme/widgets/issues/8","number":8}"#,
        r#"{"type":"post_to_slack","message":"hi"}"#,
    ];
    let answer = reqwest::Client::new()
        .post(format!(
            "{}/api/v1/manifests?repo=acme/widgets&run_id=9&workflow=triage",
            t.server.url()
        ))
        .bearer_auth(TOKEN)
        .header("content-type", "application/x-ndjson")
        .body(lines.join("\n"))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 202);
    t.app.wait_idle().await;
    t
}

/// GET `/metrics` at `base` with `bearer`: status and body.
async fn scrape(base: &str, bearer: Option<&str>) -> (u16, String) {
    let req = reqwest::Client::new().get(format!("{base}/metrics"));
    let r = crate::answers::bearer(req, bearer).send().await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

#[tokio::test]
async fn outputs_are_counted_by_status_strength_type_and_workflow() {
    let dir = tempfile::tempdir().unwrap();
    let opted_in = MetricsOptions {
        workflow_labels: true,
        ..MetricsOptions::default()
    };
    let t = app_with_outputs(dir.path(), opted_in).await;
    let response = t.get_raw("/metrics").await;
    let kind = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(kind.starts_with("application/openmetrics-text"), "{kind}");
    let text = response.text().await.unwrap();
    let gauge = |kind: &str| -> u64 {
        text.lines()
            .filter(|l| {
                l.starts_with("safe_outcomes_outputs{")
                    && l.contains(&format!("safe_output_type=\"{kind}\""))
                    && l.contains("workflow=\"triage\"")
            })
            .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
            .sum()
    };
    assert_eq!(gauge("create_issue"), 2, "{text}");
    assert_eq!(
        gauge("custom"),
        1,
        "a custom type is counted as custom: {text}"
    );
    assert!(
        text.contains("# TYPE safe_outcomes_outputs gauge"),
        "{text}"
    );
    assert!(
        text.contains("\nsafe_outcomes_deliveries_received_total 1\n"),
        "{text}"
    );
    assert!(text.ends_with("# EOF\n"), "{text}");
    assert!(
        !text.contains("widgets") && !text.contains("acme"),
        "{text}"
    );
    dashboard_names_only_what_is_served(&text);
}

/// Every metric the Grafana dashboard in deploy/ queries is one `/metrics`
/// serves (a renamed metric would leave a panel silently empty).
fn dashboard_names_only_what_is_served(scrape: &str) {
    let path = common::manifest_dir().join("deploy/grafana-dashboard.json");
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut checked = 0;
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            let expr = target["expr"].as_str().unwrap();
            for (i, _) in expr.match_indices("safe_outcomes_") {
                let name: String = expr[i..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                let family = name.strip_suffix("_total").unwrap_or(&name);
                assert!(
                    scrape.contains(&format!("# TYPE {family} ")),
                    "the dashboard queries {name}, which /metrics does not serve"
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 10, "{checked}");
    dashboard_groups_only_by_served_labels(&dashboard, scrape);
}

/// The labels each served family carries in a scrape, by family name
/// (`_total` stripped); a family with no labelled sample has none.
fn served_labels(scrape: &str) -> std::collections::BTreeMap<String, BTreeSet<String>> {
    let mut labels = std::collections::BTreeMap::<String, BTreeSet<String>>::new();
    for line in scrape.lines().filter(|l| !l.starts_with('#')) {
        let Some((name, rest)) = line.split_once('{') else {
            continue;
        };
        let family = name.strip_suffix("_total").unwrap_or(name).to_string();
        let set = labels.entry(family).or_default();
        for pair in rest.split("\",") {
            if let Some((label, _)) = pair.split_once("=\"") {
                set.insert(label.trim_start_matches(',').to_string());
            }
        }
    }
    labels
}

/// Every label the dashboard groups by, matches on, names in a legend or
/// lists in a variable (`label_values`) is one the queried family carries
/// in a real scrape: a renamed label leaves a panel empty or collapses its
/// lines into one, which the metric names alone do not show.
fn dashboard_groups_only_by_served_labels(dashboard: &serde_json::Value, scrape: &str) {
    let served = served_labels(scrape);
    let words = |text: &str| -> Vec<String> {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    };
    let families = |expr: &str| -> Vec<String> {
        words(expr)
            .into_iter()
            .filter(|w| w.starts_with("safe_outcomes_"))
            .map(|w| w.strip_suffix("_total").unwrap_or(&w).to_string())
            .collect()
    };
    // Labels a query names: `by (...)`, matchers `{a="x", b=~"y"}`, `{{a}}`.
    let named = |expr: &str, legend: &str| -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for (i, _) in expr.match_indices("by (") {
            let list = &expr[i + 4..];
            let list = &list[..list.find(')').unwrap()];
            out.extend(words(list));
        }
        for (i, _) in expr.match_indices('{') {
            let inside = &expr[i + 1..];
            let inside = &inside[..inside.find('}').unwrap_or(inside.len())];
            for matcher in inside.split(',') {
                if let Some(at) = matcher.find(['=', '!']) {
                    out.insert(matcher[..at].trim().to_string());
                }
            }
        }
        for (i, _) in legend.match_indices("{{") {
            let inside = &legend[i + 2..];
            out.insert(inside[..inside.find("}}").unwrap()].trim().to_string());
        }
        out
    };
    let mut checked = 0;
    let mut check = |expr: &str, labels: BTreeSet<String>| {
        let carried: BTreeSet<String> = families(expr)
            .iter()
            .filter_map(|f| served.get(f))
            .flatten()
            .cloned()
            .collect();
        if carried.is_empty() {
            return; // no labelled sample in this scrape to compare with
        }
        for label in labels {
            assert!(
                carried.contains(&label),
                "the dashboard's query {expr:?} uses the label {label:?}, which none of its \
                 metrics carries in a real scrape (they carry {carried:?})"
            );
            checked += 1;
        }
    };
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            let expr = target["expr"].as_str().unwrap();
            let legend = target["legendFormat"].as_str().unwrap_or("");
            check(expr, named(expr, legend));
        }
    }
    for variable in dashboard["templating"]["list"].as_array().unwrap() {
        let query = variable["definition"].as_str().unwrap_or("");
        if let Some(args) = query.strip_prefix("label_values(") {
            let (metric, label) = args.trim_end_matches(')').split_once(',').unwrap();
            check(metric, BTreeSet::from([label.trim().to_string()]));
        }
    }
    assert!(checked >= 10, "labels checked: {checked}");
}

/// With `METRICS_TOKEN` only that bearer scrapes (not the API token, not a
/// stranger), and without the opt-in no workflow is named.
#[tokio::test]
async fn a_scrape_needs_the_metrics_token_and_names_no_workflow_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = MetricsOptions {
        token: Some("scrape-secret".into()),
        ..MetricsOptions::default()
    };
    let t = app_with_outputs(dir.path(), metrics).await;
    let base = t.server.url();
    for bearer in [None, Some(TOKEN), Some("scrape-secreT"), Some("")] {
        let (status, body) = scrape(&base, bearer).await;
        assert_eq!(status, 401, "{bearer:?}: {body}");
        assert!(!body.contains("safe_outcomes_"), "{body}");
    }
    let (status, text) = scrape(&base, Some("scrape-secret")).await;
    assert_eq!(status, 200, "{text}");
    assert!(
        !text.contains("workflow=") && !text.contains("triage"),
        "{text}"
    );
    let issues: u64 = text
        .lines()
        .filter(|l| l.starts_with("safe_outcomes_outputs{") && l.contains("type=\"create_issue\""))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(issues, 2, "{text}");
    t.stop().await;
}

/// With `METRICS_ADDR`, `serve` answers `/metrics` on that listener only:
/// the main one says 404 even to the API token; the metrics listener needs
/// `METRICS_TOKEN` when one is set.
#[tokio::test]
async fn metrics_addr_moves_metrics_to_a_listener_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    for token in [None, Some("scrape-secret")] {
        let mut env = vec![("METRICS_ADDR", addr.as_str()), ("API_TOKEN", TOKEN)];
        env.extend(token.map(|t| ("METRICS_TOKEN", t)));
        let mut serve =
            crate::common::serve::ServeChild::start(&dir.path().join("data"), &env).await;
        assert!(
            serve
                .output()
                .contains(&format!("metrics on http://{addr}/metrics")),
            "{}",
            serve.output()
        );
        let (status, body) = scrape(&serve.url, Some(TOKEN)).await;
        assert_eq!(status, 404, "{body}");
        let own = format!("http://{addr}");
        let (status, text) = scrape(&own, None).await;
        match token {
            None => assert!(
                status == 200 && text.ends_with("# EOF\n"),
                "{status} {text}"
            ),
            Some(t) => {
                assert_eq!(status, 401, "{text}");
                let (status, text) = scrape(&own, Some(t)).await;
                assert!(
                    status == 200 && text.contains("safe_outcomes_worker_up"),
                    "{text}"
                );
            }
        }
        serve.terminate().await;
    }
}

/// `Accept: text/plain` gets the text format 0.0.4: the same samples, each
/// counter's `HELP` and `TYPE` naming its `_total` sample, no `# EOF`;
/// Prometheus's own `Accept` gets OpenMetrics.
#[tokio::test]
async fn a_scraper_preferring_text_gets_the_prometheus_text_format() {
    let dir = tempfile::tempdir().unwrap();
    let t = app_with_outputs(dir.path(), MetricsOptions::default()).await;
    let get = |accept: &'static str| {
        let url = format!("{}/metrics", t.server.url());
        async move {
            let r = reqwest::Client::new()
                .get(url)
                .bearer_auth(TOKEN)
                .header("accept", accept)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200);
            let kind = r.headers()["content-type"].to_str().unwrap().to_string();
            (kind, r.text().await.unwrap())
        }
    };
    let (kind, om) = get("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1").await;
    assert!(kind.starts_with("application/openmetrics-text"), "{kind}");
    assert!(om.ends_with("# EOF\n"), "{om}");
    let (kind, text) = get("text/plain;version=0.0.4").await;
    assert!(kind.starts_with("text/plain; version=0.0.4"), "{kind}");
    assert!(!text.contains("# EOF"), "{text}");
    let samples = |body: &str| -> Vec<String> {
        body.lines()
            .filter(|l| !l.starts_with('#'))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(samples(&om), samples(&text));
    let mut counters = 0;
    for line in text.lines().filter(|l| l.starts_with("# TYPE ")) {
        let mut parts = line.split(' ').skip(2);
        let (name, kind) = (parts.next().unwrap(), parts.next().unwrap());
        let help = format!("# HELP {name} ");
        assert!(text.contains(&help), "{name} has no HELP");
        if kind == "counter" {
            assert!(name.ends_with("_total"), "{line}");
            counters += 1;
        }
    }
    assert!(counters >= 5, "{text}");
    t.stop().await;
}
