//! The outcomes as SQL (PostgreSQL): the `outcomes` relation holds exactly
//! what the read API exports, column by column; every example query of
//! docs/postgres.md ("Outcomes in SQL") and every panel query of
//! deploy/grafana-dashboard-postgres.json runs on a database the demo
//! scenario filled through the real HTTP path, and returns rows.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use safe_outcomes::app::{App, AppOptions};
use safe_outcomes::http::RouterOptions;
use safe_outcomes::ingest::client::{parse_scenario, Step, DEMO_SCENARIO};
use safe_outcomes::model::clock::Clock;

use crate::common::{self, pg::Pg, TestApp};

/// A direct connection to the App's database.
async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect to the App's database");
    tokio::spawn(connection);
    client
}

/// The demo scenario played into an App on the database at `url`.
async fn demo_on(url: &str, dir: &std::path::Path) -> (TestApp, DateTime<Utc>) {
    let steps = parse_scenario(DEMO_SCENARIO).unwrap();
    let start = steps.first().map(Step::at).unwrap();
    let clock = Clock::manual(start);
    let options = AppOptions {
        database_url: Some(url.into()),
        ..AppOptions::default()
    };
    let app = App::start_with(dir, clock.clone(), options).unwrap();
    let t = TestApp::serve(
        app,
        clock.clone(),
        dir,
        RouterOptions {
            listen_only: true,
            ..RouterOptions::default()
        },
    )
    .await;
    t.play(&steps).await;
    (t, clock.now())
}

/// The ```sql blocks of a Markdown section that are queries.
fn documented_queries(doc: &str, section: &str) -> Vec<String> {
    let start = doc.find(section).expect("the section");
    let rest = &doc[start + section.len()..];
    let body = &rest[..rest.find("\n## ").unwrap_or(rest.len())];
    body.split("```sql\n")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .map(str::trim)
        .filter(|q| q.starts_with("SELECT"))
        .map(str::to_string)
        .collect()
}

/// Replace `f(args)` calls of a Grafana macro by `expand(args)`.
fn expand_macro(sql: &str, name: &str, expand: impl Fn(&[&str]) -> String) -> String {
    let mut out = String::new();
    let mut rest = sql;
    while let Some(at) = rest.find(&format!("{name}(")) {
        out.push_str(&rest[..at]);
        let args_at = at + name.len() + 1;
        let close = rest[args_at..].find(')').expect("a closing parenthesis") + args_at;
        let args: Vec<&str> = rest[args_at..close].split(',').map(str::trim).collect();
        out.push_str(&expand(&args));
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

/// A panel query as Grafana's PostgreSQL data source sends it: the time
/// macros over `[from, to]`, multi-value variables as quoted lists.
fn as_grafana_sends(
    sql: &str,
    (from, to): (DateTime<Utc>, DateTime<Utc>),
    variables: &BTreeMap<String, Vec<String>>,
) -> String {
    let seconds = |interval: &str| match interval.trim_matches('\'') {
        "1w" => 604_800,
        "1d" => 86_400,
        "1h" => 3_600,
        other => panic!("interval {other} not expanded by the test"),
    };
    let mut sql = expand_macro(sql, "$__timeGroupAlias", |a| {
        let s = seconds(a[1]);
        format!("floor(extract(epoch from {})/{s})*{s} AS \"time\"", a[0])
    });
    sql = expand_macro(&sql, "$__timeFilter", |a| {
        format!(
            "{} BETWEEN '{}' AND '{}'",
            a[0],
            from.to_rfc3339(),
            to.to_rfc3339()
        )
    });
    for (name, values) in variables {
        let list: Vec<String> = values
            .iter()
            .map(|v| format!("'{}'", v.replace('\'', "''")))
            .collect();
        sql = sql.replace(&format!("${name}"), &list.join(","));
    }
    assert!(!sql.contains('$'), "unexpanded: {sql}");
    sql
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outcomes_are_a_relation_and_every_documented_query_and_panel_runs() {
    let Some(pg) = Pg::get("outcomes_are_a_relation") else {
        return;
    };
    let url = pg.fresh_database("so_outcomes_sql");
    let dir = tempfile::tempdir().unwrap();
    let (t, now) = demo_on(&url, dir.path()).await;
    let exported = t.outcomes().await;
    assert!(exported.len() > 20, "the demo judges outputs");
    let db = connect(&url).await;

    // The relation holds what the read API exports, field by field.
    let rows = db
        .query(
            "SELECT safe_output_id, repo, workflow, safe_output_type, outcome_status, \
             evidence_strength, human_check_signal, target_url, executed_at, record \
             FROM outcomes ORDER BY 1",
            &[],
        )
        .await
        .unwrap();
    let ids: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    assert_eq!(ids, exported.keys().cloned().collect::<Vec<_>>());
    for row in &rows {
        let id: String = row.get(0);
        let api = &exported[&id];
        let record: serde_json::Value = row.get(9);
        assert_eq!(record, serde_json::to_value(api).unwrap(), "{id}: record");
        let text = |i: usize| row.get::<_, Option<String>>(i);
        let field = |name: &str| record[name].as_str().map(str::to_string);
        assert_eq!(text(2), api.workflow, "{id}: workflow");
        assert_eq!(text(3), field("safe_output_type"), "{id}");
        assert_eq!(text(4), field("outcome_status"), "{id}");
        assert_eq!(text(5), field("evidence_strength"), "{id}");
        assert_eq!(text(6), field("human_check_signal"), "{id}");
        assert_eq!(
            text(7),
            api.target.as_ref().and_then(|t| t.url.clone()),
            "{id}: target_url"
        );
        assert_eq!(row.get::<_, DateTime<Utc>>(8), api.created_at, "{id}");
        assert!(id.starts_with(&row.get::<_, String>(1)), "{id}: repo");
    }

    // Every example query of the doc runs, and finds rows when now() is
    // the scenario's end or an hour after any output's execution (a query
    // over "the last seven days" finds the outputs of some such week).
    let doc = std::fs::read_to_string(common::manifest_dir().join("docs/postgres.md")).unwrap();
    let queries = documented_queries(&doc, "## Outcomes in SQL");
    assert!(
        queries.len() >= 5,
        "five example queries, found {}",
        queries.len()
    );
    let mut instants: Vec<DateTime<Utc>> = exported
        .values()
        .map(|o| o.created_at + chrono::Duration::hours(1))
        .collect();
    instants.push(now);
    instants.sort();
    instants.dedup();
    for query in &queries {
        let mut found = false;
        for at in instants.iter().rev() {
            let sql = query.replace("now()", &format!("'{}'::timestamptz", at.to_rfc3339()));
            let rows = db
                .query(sql.as_str(), &[])
                .await
                .unwrap_or_else(|e| panic!("{e:?}\n{query}"));
            if !rows.is_empty() {
                found = true;
                break;
            }
        }
        assert!(found, "no rows on the demo data at any instant:\n{query}");
    }

    // Every panel of the Grafana dashboard, as Grafana would send it over
    // the scenario's whole time range, its variables at "All".
    let path = common::manifest_dir().join("deploy/grafana-dashboard-postgres.json");
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut variables = BTreeMap::new();
    for var in dashboard["templating"]["list"].as_array().unwrap() {
        if var["type"] != "query" {
            continue;
        }
        let values = db
            .query(var["query"].as_str().unwrap(), &[])
            .await
            .unwrap()
            .iter()
            .map(|r| r.get::<_, String>(0))
            .collect::<Vec<_>>();
        assert!(!values.is_empty(), "variable {}", var["name"]);
        variables.insert(var["name"].as_str().unwrap().to_string(), values);
    }
    let range = (now - chrono::Duration::days(120), now);
    let panels = dashboard["panels"].as_array().unwrap();
    assert!(panels.len() >= 6);
    for panel in panels {
        assert_eq!(
            panel["datasource"]["type"], "grafana-postgresql-datasource",
            "{}",
            panel["title"]
        );
        for target in panel["targets"].as_array().unwrap() {
            let sql = as_grafana_sends(target["rawSql"].as_str().unwrap(), range, &variables);
            let found = db
                .query(sql.as_str(), &[])
                .await
                .unwrap_or_else(|e| panic!("{}: {e:?}\n{sql}", panel["title"]));
            assert!(!found.is_empty(), "{}: no rows\n{sql}", panel["title"]);
        }
    }
    t.stop().await;
    pg.drop_database("so_outcomes_sql");
}
