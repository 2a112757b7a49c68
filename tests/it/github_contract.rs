//! The App's calls, checked against GitHub's own published descriptions,
//! not against a fake written here: every REST operation the App calls
//! (`github::calls::OPERATIONS`: method, path, query parameters) is an
//! operation of GitHub's OpenAPI description (the npm package
//! `@octokit/openapi`), and every GraphQL query it sends validates against
//! GitHub's public schema (`@octokit/graphql-schema`) with deprecated fields
//! refused (graphql-js's own validation and its `NoDeprecatedCustomRule`).
//!
//! The packages are installed by `.ci/run` under
//! `target/github-descriptions` (`scripts/github-descriptions` does the
//! same by hand). Under CI (env `CI`) a missing package fails the test;
//! elsewhere the test says loudly that it skipped.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use safe_outcomes::github::calls::OPERATIONS;

/// GitHub's OpenAPI description and GraphQL schema.
fn modules() -> Option<PathBuf> {
    crate::common::github_descriptions(&["@octokit/openapi", "@octokit/graphql-schema"])
}

fn openapi(modules: &Path) -> Value {
    let path = modules.join("@octokit/openapi/generated/api.github.com.json");
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

#[test]
fn every_rest_operation_the_app_calls_is_in_githubs_openapi_description() {
    let Some(modules) = modules() else { return };
    let description = openapi(&modules);
    let mut wrong = Vec::new();
    for op in OPERATIONS.iter().filter(|o| o.label != "graphql.query") {
        let Some(operation) = description["paths"][op.path].get(op.method.to_lowercase()) else {
            wrong.push(format!(
                "{}: {} {} is not an operation",
                op.label, op.method, op.path
            ));
            continue;
        };
        // Parameters may sit on the operation or on its path.
        let declared: Vec<&str> = [
            &operation["parameters"],
            &description["paths"][op.path]["parameters"],
        ]
        .into_iter()
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|p| resolve(&description, p))
        .filter(|p| p["in"] == "query")
        .filter_map(|p| p["name"].as_str())
        .collect();
        for q in op.query {
            if !declared.contains(q) {
                wrong.push(format!(
                    "{}: {} {} has no query parameter {q} (it has {declared:?})",
                    op.label, op.method, op.path
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A parameter, following a `$ref` into `components`.
fn resolve<'a>(description: &'a Value, p: &'a Value) -> Option<&'a Value> {
    match p["$ref"].as_str() {
        Some(r) => description.pointer(r.strip_prefix('#')?),
        None => Some(p),
    }
}

#[test]
fn the_check_sees_an_operation_github_does_not_have() {
    let Some(modules) = modules() else { return };
    let description = openapi(&modules);
    assert!(
        description["paths"]["/repos/{owner}/{repo}/pulls/{pull_number}"]
            .get("get")
            .is_some()
    );
    assert!(description["paths"]["/repos/{owner}/{repo}/pulls/{pull_number}/merged_by"].is_null());
}

/// Every GraphQL document the App sends, with a name for the report.
fn queries() -> Vec<(String, String)> {
    safe_outcomes::github::fetch::graphql_documents()
        .into_iter()
        .chain(safe_outcomes::github::signals::graphql_documents())
        .collect()
}

#[test]
fn every_graphql_query_the_app_sends_validates_against_githubs_schema_without_deprecated_fields() {
    let Some(modules) = modules() else { return };
    let docs = queries();
    assert!(docs.len() >= 4, "{docs:?}");
    let report = validate(&modules, &docs);
    assert!(report.is_empty(), "{report}");
    // The check refuses what it should: a deprecated field, a field that
    // does not exist.
    let bad = vec![
        (
            "deprecated".to_string(),
            "query { repository(owner: \"o\", name: \"r\") { pullRequest(number: 1) { reviewThreads(first: 1) { nodes { comments(first: 1) { nodes { databaseId } } } } } } }".to_string(),
        ),
        (
            "unknown".to_string(),
            "query { repository(owner: \"o\", name: \"r\") { nosuchfield } }".to_string(),
        ),
    ];
    let report = validate(&modules, &bad);
    assert!(
        report.contains("deprecated") && report.contains("unknown"),
        "{report}"
    );
}

/// graphql-js's `validate` with the specified rules and
/// `NoDeprecatedCustomRule`, run by node: one line per failing document.
fn validate(modules: &Path, docs: &[(String, String)]) -> String {
    let script = r#"
const { buildSchema, parse, validate, specifiedRules, NoDeprecatedCustomRule } = require('graphql');
const fs = require('fs');
const path = require('path');
const [modules, file] = process.argv.slice(1);
const schema = buildSchema(fs.readFileSync(path.join(modules, '@octokit/graphql-schema/schema.graphql'), 'utf8'), { assumeValidSDL: true });
const out = [];
for (const [name, text] of JSON.parse(fs.readFileSync(file, 'utf8'))) {
  let errors;
  try { errors = validate(schema, parse(text), [...specifiedRules, NoDeprecatedCustomRule]); }
  catch (e) { errors = [e]; }
  for (const e of errors) out.push(name + ': ' + e.message);
}
process.stdout.write(out.join('\n'));
"#;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("documents.json");
    std::fs::write(&file, serde_json::to_vec(docs).unwrap()).unwrap();
    let out = Command::new("node")
        .arg("-e")
        .arg(script)
        .arg(modules)
        .arg(&file)
        .env("NODE_PATH", modules)
        .output()
        .expect("node runs (GitHub's schema is checked with graphql-js)");
    assert!(
        out.status.success(),
        "node: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
