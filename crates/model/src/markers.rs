//! gh-aw body markers: the HTML comments gh-aw writes into the issues, PRs and
//! comments it creates, which tie an object back to a workflow run.
//!
//! Only `<!-- ... -->` comments are read, so visible text never matches. The
//! parser works on `&str` searches only (no byte slicing by hand), so it cannot
//! panic on any input.

/// What a body's gh-aw markers say about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GhAwMarker {
    pub workflow_name: Option<String>,
    pub workflow_id: Option<String>,
    pub run_id: Option<u64>,
    pub run_url: Option<String>,
    pub tracker_id: Option<String>,
    /// The agent that ran: gh-aw's engine id, its version, and the model,
    /// from the combined XML marker (`engine:`, `version:`, `model:`).
    pub engine: Option<String>,
    pub engine_version: Option<String>,
    pub model: Option<String>,
    pub kind: MarkerKind,
}

/// Why gh-aw wrote the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkerKind {
    /// A safe output the agent asked for (issue, PR, comment, ...).
    Output,
    /// The run-started comment on the triggering item (`gh-aw-comment-type: reaction`).
    Activation,
    /// gh-aw's own close notice for an expired item (`gh-aw-expired-comments`).
    ExpiryClose,
    /// The `[aw] <workflow> failed` issue (`gh-aw-failure-issue: true`).
    FailureIssue,
}

/// Keys that may follow the workflow name in the combined XML marker.
const XML_KEYS: &[&str] = &[
    "gh-aw-tracker-id",
    "engine",
    "version",
    "model",
    "id",
    "workflow_id",
    "run",
];

#[derive(Default)]
struct Found {
    name: Option<String>,
    workflow_id: Option<String>,
    xml_workflow_id: Option<String>,
    run_url: Option<String>,
    xml_id: Option<String>,
    legacy_run_url: Option<String>,
    tracker_id: Option<String>,
    engine: Option<String>,
    engine_version: Option<String>,
    model: Option<String>,
    output: bool,
    activation: bool,
    expiry: bool,
    failure: bool,
}

/// What a comment's body says of it: (written by a gh-aw output, gh-aw's
/// expiry-close notice).
pub fn comment_flags(body: Option<&str>) -> (bool, bool) {
    let kind = body.and_then(parse_marker).map(|m| m.kind);
    (
        kind == Some(MarkerKind::Output),
        kind == Some(MarkerKind::ExpiryClose),
    )
}

/// Parse the gh-aw markers in a body; `None` when it carries none.
/// When a marker repeats (e.g. quoted footers), the first one wins.
pub fn parse_marker(body: &str) -> Option<GhAwMarker> {
    let mut f = Found::default();
    for comment in html_comments(body) {
        read_comment(comment, &mut f);
    }
    let kind = if f.failure {
        MarkerKind::FailureIssue
    } else if f.expiry {
        MarkerKind::ExpiryClose
    } else if f.activation {
        MarkerKind::Activation
    } else if f.output {
        MarkerKind::Output
    } else {
        return None;
    };
    // Same precedence as gh-aw's extractRunUrl: `run:` URL, then `id:`, then legacy.
    let run_id = f
        .run_url
        .as_deref()
        .and_then(run_id_from_url)
        .or_else(|| f.xml_id.as_deref().and_then(|s| s.parse().ok()))
        .or_else(|| f.legacy_run_url.as_deref().and_then(run_id_from_url));
    Some(GhAwMarker {
        workflow_name: f.name,
        workflow_id: f.xml_workflow_id.or(f.workflow_id),
        run_id,
        run_url: f.run_url.or(f.legacy_run_url),
        tracker_id: f.tracker_id,
        engine: f.engine,
        engine_version: f.engine_version,
        model: f.model,
        kind,
    })
}

/// The inner text of each complete `<!-- ... -->` comment.
fn html_comments(body: &str) -> impl Iterator<Item = &str> {
    let mut rest = body;
    std::iter::from_fn(move || {
        let start = rest.find("<!--")?;
        let after = &rest[start + 4..];
        let end = after.find("-->")?;
        rest = &after[end + 3..];
        Some(after[..end].trim())
    })
}

fn set(slot: &mut Option<String>, value: &str) {
    let value = value.trim();
    if slot.is_none() && !value.is_empty() {
        *slot = Some(value.to_string());
    }
}

fn read_comment(c: &str, f: &mut Found) {
    if let Some(rest) = c.strip_prefix("gh-aw-agentic-workflow:") {
        f.output = true;
        read_xml_marker(rest, f);
    } else if let Some(rest) = c.strip_prefix("gh-aw-workflow-id:") {
        f.output = true;
        set(&mut f.workflow_id, rest);
    } else if let Some(rest) = c.strip_prefix("gh-aw-tracker-id:") {
        f.output = true;
        set(&mut f.tracker_id, rest);
    } else if let Some(rest) = c.strip_prefix("gh-aw-run-url:") {
        f.output = true;
        set(&mut f.legacy_run_url, rest);
    } else if let Some(rest) = c.strip_prefix("gh-aw-comment-type:") {
        f.activation |= rest.trim() == "reaction";
    } else if c == "gh-aw-expired-comments" {
        f.expiry = true;
    } else if let Some(rest) = c.strip_prefix("gh-aw-failure-issue:") {
        f.failure = true;
        for (key, value) in key_values(rest, is_any_key) {
            if key == "workflow_id" {
                set(&mut f.workflow_id, &value);
            }
        }
    }
}

/// `<name>, key: value, key: value ...`. The name is everything before the
/// first known key, so a name containing commas or colons survives.
fn read_xml_marker(rest: &str, f: &mut Found) {
    for (key, value) in key_values(rest, |k| XML_KEYS.contains(&k)) {
        match key.as_str() {
            "" => set(&mut f.name, &value),
            "gh-aw-tracker-id" => set(&mut f.tracker_id, &value),
            "id" => set(&mut f.xml_id, &value),
            "workflow_id" => set(&mut f.xml_workflow_id, &value),
            "run" => set(&mut f.run_url, &value),
            "engine" => set(&mut f.engine, &value),
            "version" => set(&mut f.engine_version, &value),
            "model" => set(&mut f.model, &value),
            _ => {}
        }
    }
}

/// Split `lead, k: v, k2: v2` on commas into `(key, value)` pairs, where a
/// part starts a new pair only if `is_key` accepts its `key:` prefix. Other
/// parts are glued (with the comma) onto the previous value, or onto the
/// leading unkeyed text, returned with key `""`.
fn key_values(s: &str, is_key: impl Fn(&str) -> bool) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for part in s.split(',') {
        match part.split_once(':') {
            Some((k, v)) if is_key(k.trim()) => {
                out.push((k.trim().to_string(), v.trim().to_string()));
            }
            _ => match out.last_mut() {
                Some((_, v)) => {
                    v.push(',');
                    v.push_str(part);
                }
                None => out.push((String::new(), part.to_string())),
            },
        }
    }
    for (_, v) in &mut out {
        *v = v.trim().to_string();
    }
    out
}

fn is_any_key(k: &str) -> bool {
    !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The run id at the end of `.../actions/runs/<id>[/attempts/N]`.
fn run_id_from_url(url: &str) -> Option<u64> {
    let (_, tail) = url.rsplit_once("/actions/runs/")?;
    let digits: String = tail.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: &str = "Body text\n\n> Generated by [CI Coach](https://github.com/o/r/actions/runs/42)\n\n<!-- gh-aw-agentic-workflow: CI Coach, gh-aw-tracker-id: coach-1, engine: copilot, version: 1.2.3, model: gpt-5, id: 42, workflow_id: ci-coach, run: https://github.com/o/r/actions/runs/42 -->";

    fn m(body: &str) -> Option<GhAwMarker> {
        parse_marker(body)
    }

    #[test]
    fn full_xml_marker() {
        let got = m(FULL).unwrap();
        assert_eq!(
            got,
            GhAwMarker {
                workflow_name: Some("CI Coach".into()),
                workflow_id: Some("ci-coach".into()),
                run_id: Some(42),
                run_url: Some("https://github.com/o/r/actions/runs/42".into()),
                tracker_id: Some("coach-1".into()),
                engine: Some("copilot".into()),
                engine_version: Some("1.2.3".into()),
                model: Some("gpt-5".into()),
                kind: MarkerKind::Output,
            }
        );
    }

    #[test]
    fn table() {
        // (body, kind, name, workflow_id, run_id, tracker_id)
        type Row = (
            &'static str,
            Option<MarkerKind>,
            Option<&'static str>,
            Option<&'static str>,
            Option<u64>,
            Option<&'static str>,
        );
        use MarkerKind::*;
        let rows: Vec<Row> = vec![
            ("plain text", None, None, None, None, None),
            ("", None, None, None, None, None),
            ("gh-aw-agentic-workflow: x, id: 1", None, None, None, None, None),
            ("<!-- an unrelated comment -->", None, None, None, None, None),
            // Minimal: only name and run:.
            (
                "<!-- gh-aw-agentic-workflow: Triage, run: https://github.com/o/r/actions/runs/7 -->",
                Some(Output), Some("Triage"), None, Some(7), None,
            ),
            // GHES host and an attempt suffix.
            (
                "<!-- gh-aw-agentic-workflow: T, run: https://ghe.corp/o/r/actions/runs/99/attempts/2 -->",
                Some(Output), Some("T"), None, Some(99), None,
            ),
            // run: wins over id:.
            (
                "<!-- gh-aw-agentic-workflow: T, id: 5, run: https://github.com/o/r/actions/runs/6 -->",
                Some(Output), Some("T"), None, Some(6), None,
            ),
            // id: when run: has no parseable id.
            (
                "<!-- gh-aw-agentic-workflow: T, id: 5, run: https://github.com/o/r/actions -->",
                Some(Output), Some("T"), None, Some(5), None,
            ),
            // Legacy run-url after both.
            (
                "<!-- gh-aw-run-url: https://github.com/o/r/actions/runs/11 -->",
                Some(Output), None, None, Some(11), None,
            ),
            (
                "<!-- gh-aw-agentic-workflow: T, id: 5 -->\n<!-- gh-aw-run-url: https://github.com/o/r/actions/runs/11 -->",
                Some(Output), Some("T"), None, Some(5), None,
            ),
            // Names with commas and colons.
            (
                "<!-- gh-aw-agentic-workflow: Fix: lint, format, id: 3, run: https://github.com/o/r/actions/runs/3 -->",
                Some(Output), Some("Fix: lint, format"), None, Some(3), None,
            ),
            // footer:false issue bodies: workflow id only, no run id.
            ("body\n<!-- gh-aw-workflow-id: ci-coach -->", Some(Output), None, Some("ci-coach"), None, None),
            ("<!-- gh-aw-tracker-id: t-9 -->", Some(Output), None, None, None, Some("t-9")),
            // Activation comment: workflow-id marker but reaction type wins.
            (
                "Agent started.\n<!-- gh-aw-workflow-id: CI Coach -->\n<!-- gh-aw-tracker-id: t -->\n<!-- gh-aw-comment-type: reaction -->",
                Some(Activation), None, Some("CI Coach"), None, Some("t"),
            ),
            // Expiry close carries the XML marker too.
            (
                "> Closed by [x](u)\n<!-- gh-aw-expired-comments -->\n<!-- gh-aw-workflow-id: w -->\n<!-- gh-aw-agentic-workflow: W, run: https://github.com/o/r/actions/runs/8 -->",
                Some(ExpiryClose), Some("W"), Some("w"), Some(8), None,
            ),
            (
                "<!-- gh-aw-failure-issue: true, workflow_id: ci-coach, branch: main, failure_categories: a, b -->",
                Some(FailureIssue), None, Some("ci-coach"), None, None,
            ),
            // XML workflow_id wins over the standalone marker; first marker wins.
            (
                "<!-- gh-aw-agentic-workflow: A, workflow_id: x, run: https://github.com/o/r/actions/runs/1 -->\n<!-- gh-aw-workflow-id: y -->\n<!-- gh-aw-agentic-workflow: B, run: https://github.com/o/r/actions/runs/2 -->",
                Some(Output), Some("A"), Some("x"), Some(1), None,
            ),
            // Unterminated comment is not a marker.
            ("<!-- gh-aw-workflow-id: w", None, None, None, None, None),
            // Garbage values do not panic and give no run id.
            (
                "<!-- gh-aw-agentic-workflow: , id: 99999999999999999999999, run: ü/actions/runs/é -->",
                Some(Output), None, None, None, None,
            ),
        ];
        for (body, kind, name, wid, run, tid) in rows {
            let got = m(body);
            assert_eq!(got.as_ref().map(|g| g.kind), kind, "kind for {body:?}");
            let Some(got) = got else { continue };
            assert_eq!(got.workflow_name.as_deref(), name, "name for {body:?}");
            assert_eq!(got.workflow_id.as_deref(), wid, "workflow_id for {body:?}");
            assert_eq!(got.run_id, run, "run_id for {body:?}");
            assert_eq!(got.tracker_id.as_deref(), tid, "tracker_id for {body:?}");
        }
    }

    #[test]
    fn never_panics_on_odd_input() {
        let samples = [
            "<!--",
            "-->",
            "<!---->",
            "<!-- -->",
            "<!--<!-- gh-aw-workflow-id: -->-->",
            "<!-- gh-aw-agentic-workflow: -->",
            "<!-- gh-aw-agentic-workflow:,,,,:::: -->",
            "<!-- gh-aw-failure-issue: -->",
            "<!-- gh-aw-run-url: /actions/runs/ -->",
            "\u{0}<!-- gh-aw-tracker-id: \u{1F600} -->",
        ];
        for s in samples {
            let _ = parse_marker(s);
            // Every prefix and suffix on a char boundary, too.
            for (i, _) in s.char_indices() {
                let _ = parse_marker(&s[..i]);
                let _ = parse_marker(&s[i..]);
            }
        }
        let _ = parse_marker(FULL);
        for (i, _) in FULL.char_indices() {
            let _ = parse_marker(&FULL[..i]);
        }
    }
}
