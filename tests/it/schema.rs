//! The schema test: every endpoint of the OpenAPI document served at
//! `/api/v1/openapi.json` is called through the real router on the demo
//! scenario — every output, every run, every window, the export in both
//! formats, the ingest and health endpoints, and their refusals — and each
//! answer is validated (JSON Schema 2020-12, `jsonschema`) against the
//! schema the document gives for that path, method and status. Beyond
//! the schema's own rules, an object may hold only the fields the document
//! declares: a field renamed or added without the document fails here.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::common;
use common::TestApp;
use safe_outcomes::ingest::client::Client;

struct Checker {
    doc: Value,
    /// (method, path) of the document an answer was checked against.
    seen: BTreeSet<(String, String)>,
    checked: usize,
    /// The first JSON answer of each `"METHOD PATH STATUS"`, arrays cut to
    /// their first item: what the document's examples must look like.
    real: serde_json::Map<String, Value>,
}

/// `value` with every array cut to its first item.
fn trimmed(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().take(1).map(trimmed).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(k, v)| (k.clone(), trimmed(v)))
                .collect(),
        ),
        v => v.clone(),
    }
}

/// Do `a` and `b` have the same shape: the same fields at every level, the
/// same JSON types (null matching anything: a field that may be null), the
/// same shape of their arrays' first items?
fn same_shape(a: &Value, b: &Value, at: &str) -> Result<(), String> {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => Ok(()),
        (Value::Object(x), Value::Object(y)) => {
            let (kx, ky): (BTreeSet<_>, BTreeSet<_>) = (x.keys().collect(), y.keys().collect());
            if kx != ky {
                return Err(format!("{at}: fields {kx:?} against {ky:?}"));
            }
            x.iter()
                .try_for_each(|(k, v)| same_shape(v, &y[k], &format!("{at}.{k}")))
        }
        (Value::Array(x), Value::Array(y)) => match (x.first(), y.first()) {
            (Some(p), Some(q)) => same_shape(p, q, &format!("{at}[0]")),
            _ => Ok(()),
        },
        (Value::Number(_), Value::Number(_))
        | (Value::String(_), Value::String(_))
        | (Value::Bool(_), Value::Bool(_)) => Ok(()),
        _ => Err(format!("{at}: {a} against {b}")),
    }
}

impl Checker {
    /// Check `body` (JSON, or each line of an NDJSON answer) against the
    /// document's schema for `method path` answering `status`.
    fn check(&mut self, method: &str, path: &str, status: u16, body: &Value) {
        let response = &self.doc["paths"][path][method]["responses"][status.to_string()];
        assert!(
            response.is_object(),
            "{method} {path}: the document has no answer {status} (body {body})"
        );
        let content = response["content"].as_object().expect("content");
        let (kind, media) = content.iter().next().expect("one media type");
        let kind = kind.clone();
        let schema = media["schema"].clone();
        self.seen.insert((method.to_string(), path.to_string()));
        match kind.as_str() {
            "application/x-ndjson" => {
                let text = body.as_str().expect("an NDJSON body");
                for line in text.lines() {
                    let record: Value = serde_json::from_str(line).unwrap();
                    self.validate(&format!("{method} {path} {status} line"), &schema, &record);
                }
            }
            _ => self.validate(&format!("{method} {path} {status}"), &schema, body),
        }
        if kind == "application/json" && path != "/api/v1/openapi.json" {
            let key = format!("{} {path} {status}", method.to_uppercase());
            self.real.entry(key).or_insert_with(|| trimmed(body));
        }
    }

    fn validate(&mut self, what: &str, schema: &Value, instance: &Value) {
        let mut root = schema.clone();
        if !root.is_object() {
            root = json!({"allOf": [root]});
        }
        root["components"] = self.doc["components"].clone();
        let validator = jsonschema::draft202012::options()
            .build(&root)
            .unwrap_or_else(|e| panic!("{what}: the schema does not build: {e}"));
        let errors: Vec<String> = validator
            .iter_errors(instance)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{what}: {errors:#?}\n{instance:#}");
        let mut extra = Vec::new();
        undeclared(&self.doc, schema, instance, "", &mut extra);
        assert!(
            extra.is_empty(),
            "{what}: fields the document does not declare: {extra:?}"
        );
        self.checked += 1;
    }
}

/// `schema` with `$ref`s to components followed.
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema["$ref"].as_str() {
        Some(r) => {
            let name = r.trim_start_matches("#/components/schemas/");
            resolve(doc, &doc["components"]["schemas"][name])
        }
        None => schema,
    }
}

/// The properties an object schema declares (with its `allOf` members'),
/// and what it says of others (`additionalProperties`).
fn declared<'a>(
    doc: &'a Value,
    schema: &'a Value,
    props: &mut Vec<(&'a String, &'a Value)>,
) -> Option<&'a Value> {
    let schema = resolve(doc, schema);
    let mut additional = schema.get("additionalProperties");
    if let Some(p) = schema["properties"].as_object() {
        props.extend(p.iter());
    }
    for member in schema["allOf"].as_array().into_iter().flatten() {
        additional = additional.or(declared(doc, member, props));
    }
    additional
}

/// Paths in `value` of object fields the schema does not declare.
fn undeclared(doc: &Value, schema: &Value, value: &Value, at: &str, out: &mut Vec<String>) {
    let schema = resolve(doc, schema);
    // `Option<T>`: the branch that is not null.
    if let Some(branch) = schema["oneOf"]
        .as_array()
        .or(schema["anyOf"].as_array())
        .and_then(|bs| bs.iter().find(|b| b["type"] != "null"))
    {
        if !value.is_null() {
            undeclared(doc, branch, value, at, out);
        }
        return;
    }
    match value {
        Value::Object(fields) => {
            let mut props = Vec::new();
            let additional = declared(doc, schema, &mut props);
            if props.is_empty() && additional.is_none() {
                return; // a free-form object
            }
            for (name, v) in fields {
                let path = format!("{at}.{name}");
                match props.iter().find(|(p, _)| *p == name) {
                    Some((_, s)) => undeclared(doc, s, v, &path, out),
                    None => match additional {
                        Some(s) if s.is_object() => undeclared(doc, s, v, &path, out),
                        Some(Value::Bool(true)) => {}
                        _ => out.push(path),
                    },
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                undeclared(doc, &schema["items"], v, &format!("{at}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[tokio::test]
async fn every_endpoint_answers_as_the_openapi_document_says() {
    let (_dir, t) = TestApp::fresh_demo().await;
    let c = &t.client;

    let served = c.get("/api/v1/openapi.json").await.unwrap();
    assert_eq!(served.status, 200);
    assert_eq!(
        served.body,
        serde_json::to_value(safe_outcomes::http::openapi::openapi()).unwrap(),
        "the served document is the generated one"
    );
    let mut k = Checker {
        doc: served.body.clone(),
        seen: BTreeSet::new(),
        checked: 0,
        real: serde_json::Map::new(),
    };
    k.check("get", "/api/v1/openapi.json", 200, &served.body);

    // Outputs: every page, a cut, refusals.
    let mut ids = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = crate::common::outputs_page(7, cursor.as_deref());
        let page = c.get(&path).await.unwrap();
        k.check("get", "/api/v1/outputs", page.status, &page.body);
        for item in page.body["items"].as_array().unwrap() {
            ids.push(item["safe_output_id"].as_str().unwrap().to_string());
        }
        match page.body["next_cursor"].as_str() {
            Some(cur) => cursor = Some(cur.to_string()),
            None => break,
        }
    }
    assert!(ids.len() > 20, "{}", ids.len());
    for path in [
        "/api/v1/outputs?status=rejected&strength=strong",
        "/api/v1/outputs?nope=1",
        "/api/v1/outputs?status=maybe",
    ] {
        let a = c.get(path).await.unwrap();
        k.check("get", "/api/v1/outputs", a.status, &a.body);
    }
    let anonymous = Client::new(&t.server.url(), None, None);
    let a = anonymous.get("/api/v1/outputs").await.unwrap();
    assert_eq!(a.status, 401);
    k.check("get", "/api/v1/outputs", a.status, &a.body);

    // Every output, and one that is not.
    let mut runs = BTreeSet::new();
    for id in &ids {
        let a = c.get(&format!("/api/v1/outputs/{id}")).await.unwrap();
        assert_eq!(a.status, 200, "{id}");
        k.check("get", "/api/v1/outputs/{id}", a.status, &a.body);
        let x = &a.body["execution"];
        if let Some(run) = x["run_id"].as_u64() {
            runs.insert((x["repo"].as_str().unwrap().to_string(), run));
        }
    }
    let a = c.get("/api/v1/outputs/acme/widgets:9:9").await.unwrap();
    k.check("get", "/api/v1/outputs/{id}", a.status, &a.body);
    let a = c
        .client_post_empty(&format!("/api/v1/outputs/{}/reconcile", ids[0]))
        .await;
    k.check("post", "/api/v1/outputs/{id}/reconcile", a.status, &a.body);

    // Every run, and one that is not.
    assert!(runs.len() > 5);
    for (repo, run) in &runs {
        let a = c.get(&format!("/api/v1/runs/{repo}/{run}")).await.unwrap();
        assert_eq!(a.status, 200, "{repo} {run}");
        k.check(
            "get",
            "/api/v1/runs/{owner}/{repo}/{run_id}",
            a.status,
            &a.body,
        );
    }
    let a = c.get("/api/v1/runs/acme/widgets/1").await.unwrap();
    k.check(
        "get",
        "/api/v1/runs/{owner}/{repo}/{run_id}",
        a.status,
        &a.body,
    );

    // The report at every window, the series, their refusals.
    for q in [
        "",
        "?window=1h",
        "?window=24h",
        "?window=7d",
        "?window=30d",
        "?repo=acme/docs",
        "?window=2w",
    ] {
        let a = c.get(&format!("/api/v1/report{q}")).await.unwrap();
        k.check("get", "/api/v1/report", a.status, &a.body);
    }
    for q in ["", "?since=2026-09-01", "?by=day"] {
        let a = c.get(&format!("/api/v1/series{q}")).await.unwrap();
        k.check("get", "/api/v1/series", a.status, &a.body);
    }

    // The export: outcome records, and opentraces records against their own schema.
    for q in ["", "?format=jsonl", "?format=xlsx"] {
        let a = c.get(&format!("/api/v1/export{q}")).await.unwrap();
        k.check("get", "/api/v1/export", a.status, &a.body);
    }
    let a = c.get("/api/v1/export.jsonl").await.unwrap();
    k.check("get", "/api/v1/export.jsonl", a.status, &a.body);
    let a = c.get("/api/v1/export?format=opentraces").await.unwrap();
    assert_eq!(a.status, 200);
    let trace = json!({"$ref": "#/components/schemas/TraceRecord"});
    for line in a.body.as_str().unwrap().lines() {
        k.validate(
            "opentraces line",
            &trace,
            &serde_json::from_str(line).unwrap(),
        );
    }

    // Ingest: a manifest with a bad line, the same again, one with nothing usable.
    let good = json!({"type": "add_comment", "url": "https://github.com/acme/widgets/issues/5#issuecomment-900001", "number": 5, "repo": "acme/widgets", "timestamp": "2026-10-01T10:00:00Z"});
    let body = format!("{good}\nnot json\n");
    for expected in [202, 200] {
        let a = c
            .post_manifest("acme/widgets", 99001, Some("schema"), body.clone())
            .await
            .unwrap();
        assert_eq!(a.status, expected, "{}", a.body);
        k.check("post", "/api/v1/manifests", a.status, &a.body);
    }
    let a = c
        .post_manifest("acme/widgets", 99002, None, "nope\n".into())
        .await
        .unwrap();
    k.check("post", "/api/v1/manifests", a.status, &a.body);
    let a = c
        .post_json("/api/v1/backfill", &json!({"days": 3}))
        .await
        .unwrap();
    k.check("post", "/api/v1/backfill", a.status, &a.body);
    let a = c.get("/api/v1/backfill").await.unwrap();
    k.check("get", "/api/v1/backfill", a.status, &a.body);

    // Who reads: the API token, and no one.
    let a = c.get("/api/v1/me").await.unwrap();
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["scope"], "all", "{}", a.body);
    k.check("get", "/api/v1/me", a.status, &a.body);
    let a = anonymous.get("/api/v1/me").await.unwrap();
    assert_eq!(a.status, 401, "{}", a.body);
    k.check("get", "/api/v1/me", a.status, &a.body);

    // Health.
    let a = c.get("/status").await.unwrap();
    k.check("get", "/status", a.status, &a.body);
    let a = c.get("/ping").await.unwrap();
    k.check("get", "/ping", a.status, &a.body);
    let a = c.get("/ready").await.unwrap();
    k.check("get", "/ready", a.status, &a.body);

    // Every path and method of the document was answered at least once.
    let described: BTreeSet<(String, String)> = k.doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(p, ops)| {
            ops.as_object()
                .unwrap()
                .keys()
                .map(move |m| (m.clone(), p.clone()))
        })
        .collect();
    assert_eq!(
        k.seen, described,
        "endpoints described but not checked, or the reverse"
    );
    eprintln!("{} answers checked against the document", k.checked);
    t.stop().await;
    examples_are_real_answers(&mut k);
}

/// The document's examples are real answers (issue 45): every JSON answer
/// seen above has an example in the document, each example validates
/// against its answer's schema (no undeclared field either), and has the
/// shape of the real answer. `SAFE_OUTCOMES_WRITE_OPENAPI_EXAMPLES=1`
/// writes the answers seen as the examples (`src/http/openapi-examples.json`,
/// read by `http::openapi::openapi`), then checks the document built before
/// the write (rebuild and run again to check the new file).
fn examples_are_real_answers(k: &mut Checker) {
    if std::env::var_os("SAFE_OUTCOMES_WRITE_OPENAPI_EXAMPLES").is_some() {
        let file = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src/http/openapi-examples.json"
        );
        let text = serde_json::to_string_pretty(&Value::Object(k.real.clone())).unwrap();
        std::fs::write(file, text + "\n").unwrap();
        eprintln!("wrote {} examples to {file}", k.real.len());
        return;
    }
    let doc = k.doc.clone();
    let mut examples = 0;
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            for (status, answer) in op["responses"].as_object().unwrap() {
                let media = &answer["content"]["application/json"];
                let key = format!("{} {path} {status}", method.to_uppercase());
                let Some(example) = media.get("example") else {
                    assert!(
                        !k.real.contains_key(&key),
                        "{key}: answered as JSON, and the document has no example"
                    );
                    continue;
                };
                k.validate(&format!("{key} example"), &media["schema"], example);
                let real = k
                    .real
                    .get(&key)
                    .unwrap_or_else(|| panic!("{key}: an example of no answer seen"));
                if let Err(e) = same_shape(example, real, "") {
                    panic!("{key}: the example is not the shape of the real answer: {e}");
                }
                examples += 1;
            }
        }
    }
    assert_eq!(
        examples,
        k.real.len(),
        "every JSON answer seen has its example"
    );
    eprintln!("{examples} examples checked against real answers");
}

trait PostEmpty {
    async fn client_post_empty(&self, path: &str) -> safe_outcomes::ingest::client::Answer;
}

impl PostEmpty for Client {
    async fn client_post_empty(&self, path: &str) -> safe_outcomes::ingest::client::Answer {
        self.post_json(path, &json!({})).await.unwrap()
    }
}

/// Does the router's path `route` (`{name}` a segment, `{*name}` the rest)
/// serve the document's path `doc` (`{name}` a segment)?
fn serves(route: &str, doc: &str) -> bool {
    let r: Vec<&str> = route.split('/').collect();
    let d: Vec<&str> = doc.split('/').collect();
    let param = |s: &str| s.starts_with('{') && s.ends_with('}');
    for (i, seg) in r.iter().enumerate() {
        if seg.starts_with("{*") {
            // The rest of the path: at least the parameter itself.
            return d.get(i).is_some_and(|s| param(s));
        }
        match d.get(i) {
            Some(s) if s == seg || (param(s) && param(seg)) => {}
            _ => return false,
        }
    }
    r.len() == d.len()
}

/// Every route the router serves under `/api/v1` — read from the router
/// itself (`routes::of`), so a route added tomorrow is held to this — is in
/// the OpenAPI document with each of its methods, and every path and method
/// of the document is served by a route (issue 45: `/api/v1/me` was served
/// and not described).
#[test]
fn every_api_route_of_the_router_is_in_the_document() {
    use safe_outcomes::app::App;
    use safe_outcomes::http::{router, RouterOptions};
    use safe_outcomes::model::clock::Clock;
    let dir = tempfile::tempdir().unwrap();
    let app = App::start(&dir.path().join("data"), Clock::System).unwrap();
    let routes = crate::routes::of(&router(&app, RouterOptions::default()));
    let doc = serde_json::to_value(safe_outcomes::http::openapi::openapi()).unwrap();
    let paths = doc["paths"].as_object().unwrap();
    let mut api = 0;
    for route in routes.iter().filter(|r| r.path.starts_with("/api/v1/")) {
        for method in &route.methods {
            let method = method.to_ascii_lowercase();
            let described = paths
                .iter()
                .any(|(p, ops)| serves(&route.path, p) && ops.get(&method).is_some());
            assert!(
                described,
                "{method} {} is served but not in the document",
                route.path
            );
            api += 1;
        }
    }
    for (path, ops) in paths {
        for method in ops.as_object().unwrap().keys() {
            let served = routes.iter().any(|r| {
                serves(&r.path, path) && r.methods.iter().any(|m| m.eq_ignore_ascii_case(method))
            });
            assert!(served, "{method} {path} is in the document but not served");
        }
    }
    assert!(paths.contains_key("/api/v1/me"));
    assert!(api >= 13, "API routes and methods walked: {api}");
}
