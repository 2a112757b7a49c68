//! `/metrics` in OpenMetrics text: the counters, and the outputs gauge by
//! status, strength, type and workflow, with no repository names.

use crate::common::{self, TestApp, TOKEN};

#[tokio::test]
async fn outputs_are_counted_by_status_strength_type_and_workflow() {
    let dir = tempfile::tempdir().unwrap();
    let t = TestApp::start(dir.path(), common::t0()).await;
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
    let response = reqwest::get(format!("{}/metrics", t.server.url()))
        .await
        .unwrap();
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
}
