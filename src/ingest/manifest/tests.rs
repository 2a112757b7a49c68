//! Tests of the manifest parser: each gh-aw manifest shape, the line cap, and
//! line-by-line rejection of bad or hostile lines.

use super::*;
use chrono::TimeZone;

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 6, 1, 0, 0, 0).unwrap()
}

fn defaults() -> ManifestDefaults {
    ManifestDefaults {
        repo: Some("def/repo".into()),
        run_id: Some(777),
        workflow: Some("ci-coach".into()),
    }
}

fn one(line: &str) -> ExecutionRecord {
    let p = parse_manifest(line, &defaults(), now());
    assert!(p.rejected.is_empty(), "{:?}", p.rejected);
    assert_eq!(p.records.len(), 1);
    p.records.into_iter().next().unwrap()
}

fn target(repo: &str, kind: TargetKind, number: Option<u64>, id: Option<u64>) -> Target {
    Target {
        repo: repo.into(),
        kind,
        number,
        id,
        node_id: None,
        url: None,
        parent_number: None,
        git_ref: None,
        name: None,
    }
}

#[test]
fn may_2026_create_pull_request() {
    let r = one(
        r#"{"type":"create_pull_request","url":"https://github.com/org/repo/pull/1","repo":"org/repo","number":1,"temporaryId":"aw_x1","timestamp":"2024-01-01T10:00:00Z"}"#,
    );
    assert_eq!(r.id, "org/repo:777:0");
    assert_eq!(r.output_type, "create_pull_request");
    assert_eq!(r.repo, "org/repo", "the line's repo wins over the default");
    assert_eq!(r.run_id, Some(777));
    assert_eq!(r.index, Some(0));
    assert_eq!(r.workflow.as_deref(), Some("ci-coach"));
    assert_eq!(r.temporary_id.as_deref(), Some("aw_x1"));
    assert_eq!(
        r.executed_at,
        Utc.with_ymd_and_hms(2024, 1, 1, 10, 0, 0).unwrap()
    );
    let t = r.target.unwrap();
    assert_eq!((t.kind, t.number), (TargetKind::PullRequest, Some(1)));
    assert_eq!(t.url.as_deref(), Some("https://github.com/org/repo/pull/1"));
    assert!(r.sources.manifest && !r.sources.webhook);
    assert!(!r.extra.contains_key("type") && !r.extra.contains_key("timestamp"));
    assert_eq!(r.extra.get("number"), Some(&Value::from(1)));
}

#[test]
fn may_2026_targets_table() {
    use TargetKind::*;
    let cases: Vec<(&str, Target)> = vec![
        // create_issue with only a number.
        (
            r#"{"type":"create_issue","repo":"github/gh-aw","number":101,"temporaryId":"aw_alpha"}"#,
            target("github/gh-aw", Issue, Some(101), None),
        ),
        // add_comment: the comment, on its thread.
        (
            r#"{"type":"add_comment","commentId":555,"url":"https://github.com/o/r/issues/9#issuecomment-555","number":9,"repo":"o/r"}"#,
            Target {
                parent_number: Some(9),
                ..target("o/r", Comment, None, Some(555))
            },
        ),
        // add_comment on a PR, only number + commentId.
        (
            r#"{"type":"add_comment","commentId":"556","number":"10","repo":"o/r"}"#,
            Target {
                parent_number: Some(10),
                ..target("o/r", Comment, None, Some(556))
            },
        ),
        // A PR fallen back to an issue: the kind follows the URL.
        (
            r#"{"type":"create_pull_request","url":"https://github.com/o/r/issues/12","number":12,"fallback_used":true}"#,
            target("o/r", Issue, Some(12), None),
        ),
        (
            r#"{"type":"create_pull_request","issue_number":13,"issue_url":"https://github.com/o/r/issues/13","fallback_used":true}"#,
            target("o/r", Issue, Some(13), None),
        ),
        // Review and review comment fragments; GHES host.
        (
            r#"{"type":"submit_pull_request_review","url":"https://ghe.corp.example/o/r/pull/4#pullrequestreview-88"}"#,
            Target {
                parent_number: Some(4),
                ..target("o/r", Review, None, Some(88))
            },
        ),
        (
            r#"{"type":"create_pull_request_review_comment","url":"https://github.com/o/r/pull/4#discussion_r99"}"#,
            Target {
                parent_number: Some(4),
                ..target("o/r", ReviewComment, None, Some(99))
            },
        ),
        (
            r#"{"type":"add_comment","url":"https://github.com/o/r/discussions/3#discussioncomment-7"}"#,
            Target {
                parent_number: Some(3),
                ..target("o/r", DiscussionComment, None, Some(7))
            },
        ),
        (
            r#"{"type":"create_discussion","url":"https://github.com/o/r/discussions/3"}"#,
            target("o/r", Discussion, Some(3), None),
        ),
        // REST URLs.
        (
            r#"{"type":"update_pull_request","url":"https://api.github.com/repos/o/r/pulls/5"}"#,
            target("o/r", PullRequest, Some(5), None),
        ),
        (
            r#"{"type":"update_issue","url":"https://ghe.corp/api/v3/repos/o/r/issues/6"}"#,
            target("o/r", Issue, Some(6), None),
        ),
        // Number only: PR-ish types make PRs, others issues.
        (
            r#"{"type":"close_pull_request","number":8}"#,
            target("def/repo", PullRequest, Some(8), None),
        ),
        (
            r#"{"type":"add_labels","number":8}"#,
            target("def/repo", Issue, Some(8), None),
        ),
        // A URL with no object gives the repository.
        (
            r#"{"type":"update_release","url":"https://github.com/o/r/releases/tag/v1"}"#,
            target("o/r", Repository, None, None),
        ),
    ];
    for (line, mut want) in cases {
        let r = one(line);
        let got = r
            .target
            .clone()
            .unwrap_or_else(|| panic!("no target for {line}"));
        want.url = got.url.clone();
        assert_eq!(got, want, "{line}");
        assert_eq!(r.repo, want.repo, "{line}");
    }
}

#[test]
fn may_2026_labels_and_state() {
    let r = one(
        r#"{"type":"add_labels","url":"https://github.com/o/r/issues/2","labelsAdded":["bug","p1"],"before_state":{"labels":["triage"]},"after_state":{"labels":["triage","bug","p1"]},"metadata":{"x":1}}"#,
    );
    assert_eq!(r.labels_added, vec!["bug", "p1"]);
    assert_eq!(r.labels_before, Some(vec!["triage".to_string()]));
    assert_eq!(r.after_state["labels"].as_array().unwrap().len(), 3);
    assert_eq!(r.metadata["x"], 1);
    assert!(r.extra.is_empty() || !r.extra.contains_key("before_state"));
    // Explicit labelsBefore wins over before_state.
    let r = one(
        r#"{"type":"add_labels","number":2,"labelsAdded":["a"],"labelsBefore":[],"before_state":{"labels":["x"]}}"#,
    );
    assert_eq!(r.labels_before, Some(vec![]));
    // Non-object state fields are kept in extra, not read.
    let r = one(r#"{"type":"update_issue","number":2,"before_state":"oops","metadata":[1]}"#);
    assert!(r.before_state.is_empty() && r.metadata.is_empty());
    assert_eq!(r.extra["before_state"], "oops");
    assert_eq!(r.labels_before, None);
}

#[test]
fn oct_2026_shape() {
    let r = one(
        r#"{"type":"add_labels","provider":"github","id":4242,"target":{"provider":"github","repository":"o/r","number":5,"kind":"issue"},"labels":[{"name":"bug","database_id":1,"node_id":"LA_1"},{"name":"p2"}],"before_state":{"labels":[{"name":"triage"}]},"timestamp":"2026-10-10T08:00:00.000Z","actor":{"login":"my-app[bot]","type":"Bot"},"claim_id":"q-1"}"#,
    );
    assert_eq!(r.repo, "o/r");
    assert_eq!(r.provider, None, "github means None");
    assert_eq!(
        r.target,
        Some(target("o/r", TargetKind::Issue, Some(5), None))
    );
    assert_eq!(r.labels_added, vec!["bug", "p2"]);
    assert_eq!(r.labels_before, Some(vec!["triage".to_string()]));
    assert_eq!(r.actor.as_deref(), Some("my-app[bot]"));
    assert_eq!(r.extra["claim_id"], "q-1");
    assert_eq!(
        r.executed_at,
        Utc.with_ymd_and_hms(2026, 10, 10, 8, 0, 0).unwrap()
    );

    // A comment named by the Oct target.
    let r = one(
        r#"{"type":"add_comment","id":901,"target":{"repository":"o/r","number":5,"kind":"comment"}}"#,
    );
    assert_eq!(
        r.target,
        Some(Target {
            parent_number: Some(5),
            ..target("o/r", TargetKind::Comment, None, Some(901))
        })
    );

    // metadata.run_id of dispatch_workflow is the dispatched run, not ours.
    let r = one(
        r#"{"type":"dispatch_workflow","metadata":{"run_id":123456,"workflow_name":"deploy.yml"}}"#,
    );
    assert_eq!(r.run_id, Some(777));
    assert_eq!(r.metadata["run_id"], 123456);
    // Its target is that run (src/ingest/targets/workflow.rs).
    assert_eq!(
        r.target.map(|t| t.key()).as_deref(),
        Some("def/repo#workflow_run:123456")
    );

    let r = one(
        r#"{"type":"push_to_pull_request_branch","url":"https://github.com/o/r/pull/3","metadata":{"commit_sha":"abc"},"before_state":{"head_sha":"000"},"after_state":{"head_sha":"abc"},"workflow_run_id":"31337","workflow":"other"}"#,
    );
    assert_eq!(r.run_id, Some(31337));
    assert_eq!(r.id, "o/r:31337:0");
    assert_eq!(r.workflow.as_deref(), Some("other"));
    assert_eq!(r.field_str("commit_sha"), Some("abc"));
}

#[test]
fn non_github_provider() {
    let r = one(
        r#"{"type":"jira_create_issue","provider":"jira","url":"https://acme.atlassian.net/browse/PROJ-12","target":{"provider":"jira","repository":"PROJ","kind":"issue"},"identifier":"PROJ-12"}"#,
    );
    assert_eq!(r.provider.as_deref(), Some("jira"));
    assert_eq!(r.repo, "def/repo", "a Jira project is not a repo");
    assert_eq!(r.target, None);
    assert_eq!(r.extra["url"], "https://acme.atlassian.net/browse/PROJ-12");
    // Provider implied by the type prefix.
    let r = one(r#"{"type":"linear_add_comment","url":"https://linear.app/acme/issue/ENG-1"}"#);
    assert_eq!(r.provider.as_deref(), Some("linear"));
    assert_eq!(r.target, None);
}

/// Feed `body` to a splitter in pieces of `step` bytes.
fn split(body: &[u8], step: usize, max_line: usize) -> Vec<(usize, Option<String>, usize)> {
    let mut lines = Vec::new();
    let mut each = |l: RawLine<'_>| {
        let text = l.bytes.map(|b| String::from_utf8_lossy(b).into_owned());
        lines.push((l.number, text, l.len));
        Ok::<(), ()>(())
    };
    let mut splitter = LineSplitter::new(max_line);
    for piece in body.chunks(step) {
        splitter.push(piece, &mut each).unwrap();
    }
    splitter.finish(&mut each).unwrap();
    lines
}

#[test]
fn lines_are_the_same_however_the_body_is_cut_and_long_ones_are_not_kept() {
    let body = b"{\"a\":1}\n\n0123456789abcdef\nlast";
    let expected = vec![
        (1, Some("{\"a\":1}".to_string()), 7),
        (2, Some(String::new()), 0),
        (3, None, 16),
        (4, Some("last".to_string()), 4),
    ];
    for step in [1, 2, 3, 7, body.len()] {
        assert_eq!(split(body, step, 8), expected, "pieces of {step}");
    }
    // A trailing newline ends the last line; nothing follows it.
    assert_eq!(split(b"a\n", 1, 8), vec![(1, Some("a".to_string()), 1)]);
}

#[test]
fn a_line_over_the_cap_is_rejected_and_still_counts_for_the_index() {
    let body = "{\"type\":\"noop\",\"repo\":\"o/r\"}\n{\"type\":\"noop\",\"repo\":\"o/r\",\"pad\":\"xxxxxxxxxxxxxxxx\"}\n\n{\"type\":\"noop\",\"repo\":\"o/r\"}";
    let mut parser = LineParser::new(defaults(), now(), 40);
    let mut results = Vec::new();
    let mut splitter = LineSplitter::new(40);
    let mut each = |l: RawLine<'_>| {
        results.extend(parser.parse(l));
        Ok::<(), ()>(())
    };
    splitter.push(body.as_bytes(), &mut each).unwrap();
    splitter.finish(&mut each).unwrap();
    assert_eq!(parser.items(), 3, "the blank line is not an item");
    assert_eq!(results.len(), 3);
    let rejected = results[1].as_ref().unwrap_err();
    assert_eq!(rejected.line, 2);
    assert!(
        rejected.error.contains("more than the 40 bytes"),
        "{}",
        rejected.error
    );
    assert_eq!(results[2].as_ref().unwrap().index, Some(2));
}

#[test]
fn bad_lines_are_rejected_and_the_rest_counts() {
    let body = concat!(
        r#"{"type":"create_issue","number":1,"repo":"o/r","timestamp":"yesterday"}"#,
        "\n",
        "\n",
        "   \n",
        r#"{"type":"create_issue","number":2"#,
        "\n",
        "[1,2]\n",
        r#"{"number":3}"#,
        "\n",
        r#"{"type":"frobnicate_widget","number":4,"widget":{"a":1}}"#,
        "\n",
    );
    let p = parse_manifest(body, &defaults(), now());
    let lines: Vec<usize> = p.rejected.iter().map(|r| r.line).collect();
    assert_eq!(lines, vec![4, 5, 6]);
    assert!(p.rejected[0].error.contains("JSON"));
    assert!(p.rejected[1].error.contains("object"));
    assert!(p.rejected[2].error.contains("type"));
    let ids: Vec<&str> = p.records.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, vec!["o/r:777:0", "def/repo:777:4"]);
    assert_eq!(p.records[0].executed_at, now(), "unparseable timestamp");
    assert_eq!(p.records[0].extra["timestamp"], "yesterday");
    assert_eq!(p.records[1].output_type, "frobnicate_widget");
    assert_eq!(p.records[1].extra["widget"]["a"], 1);
    // Posting the same manifest again gives the same ids.
    assert_eq!(parse_manifest(body, &defaults(), now()), p);
}

#[test]
fn a_timestamp_outside_2000_to_2200_rejects_its_line() {
    let body = concat!(
        r#"{"type":"create_issue","number":1,"repo":"o/r","timestamp":"9999-12-31T23:59:59Z"}"#,
        "\n",
        r#"{"type":"create_issue","number":2,"repo":"o/r","timestamp":"1970-01-01T00:00:00Z"}"#,
        "\n",
        r#"{"type":"create_issue","number":3,"repo":"o/r","timestamp":"2026-01-01T00:00:00Z"}"#,
        "\n",
    );
    let p = parse_manifest(body, &defaults(), now());
    let lines: Vec<usize> = p.rejected.iter().map(|r| r.line).collect();
    assert_eq!(lines, vec![1, 2]);
    assert!(
        p.rejected[0].error.contains("`timestamp`"),
        "{:?}",
        p.rejected
    );
    assert!(
        p.rejected[0].error.contains("2200-01-01"),
        "{:?}",
        p.rejected
    );
    assert_eq!(p.records.len(), 1);
}

#[test]
fn missing_repo_is_rejected() {
    let p = parse_manifest(
        "{\"type\":\"create_issue\",\"number\":1}\n{\"type\":\"noop\",\"url\":\"https://github.com/o/r/issues/1\"}",
        &ManifestDefaults::default(),
        now(),
    );
    assert_eq!(p.rejected.len(), 1);
    assert_eq!(p.rejected[0].line, 1);
    assert!(p.rejected[0].error.contains("no repo"));
    assert_eq!(p.records[0].id, "o/r:norun:1");
    assert_eq!(p.records[0].workflow, None);
}

#[test]
fn hostile_identifiers_are_rejected_line_by_line() {
    let hostile = [
        (
            r#"{"type":"create_issue","repo":"o/r](https://evil)","number":1}"#,
            "repo",
        ),
        (
            r#"{"type":"create_issue","repo":"<img src=x>/r","number":1}"#,
            "repo",
        ),
        (
            r#"{"type":"create_issue","repo":"-o/r","number":1}"#,
            "repo",
        ),
        (
            r#"{"type":"create_issue","repo":"o/..","number":1}"#,
            "repo",
        ),
        (r#"{"type":"Create-Issue","number":1}"#, "type"),
        (r#"{"type":"x\u001b[31m","number":1}"#, "type"),
        (r#"{"type":"create_issue","number":0}"#, "number"),
        (r#"{"type":"create_issue","number":-4}"#, "number"),
        (
            r#"{"type":"create_issue","number":"99999999999999999999"}"#,
            "number",
        ),
        (
            r#"{"type":"create_issue","number":1,"workflow_run_id":0}"#,
            "workflow_run_id",
        ),
        (
            r#"{"type":"add_comment","target":{"repository":"o/r","number":-1,"kind":"issue"}}"#,
            "target.number",
        ),
        (
            r#"{"type":"create_issue","number":1,"workflow":"ci\u001b]8;;https://evil\u0007"}"#,
            "workflow",
        ),
        (
            r#"{"type":"create_issue","url":"https://github.com/@org%2Fteam/x/issues/1"}"#,
            "repo",
        ),
        (
            r#"{"type":"add_comment","repo":"o/r","url":"https://github.com/o/r%3Ca%3E/issues/1"}"#,
            "target repo",
        ),
    ];
    let body: Vec<&str> = hostile.iter().map(|(l, _)| *l).collect();
    let body = format!(
        "{}\n{}",
        body.join("\n"),
        r#"{"type":"create_issue","number":2}"#
    );
    let p = parse_manifest(&body, &defaults(), now());
    assert_eq!(p.records.len(), 1, "only the good line: {:?}", p.records);
    assert_eq!(p.records[0].id, format!("def/repo:777:{}", hostile.len()));
    assert_eq!(p.rejected.len(), hostile.len());
    for (r, (line, what)) in p.rejected.iter().zip(hostile) {
        assert!(r.error.contains(what), "{line} → {}", r.error);
    }
}

#[test]
fn github_url_parsing_is_total() {
    for url in [
        "",
        "https://",
        "https://github.com",
        "https://github.com/o",
        "x/y/z",
        "https://github.com/o/r/pull/x",
        "https://github.com/o/r/issues/1#issuecomment-x",
        "https://github.com/o/r/pulls/comments/",
    ] {
        let _ = parse_github_url(url);
    }
    assert_eq!(parse_github_url("https://github.com/o"), None);
    let t = parse_github_url("https://github.com/o/r/issues/1#issuecomment-x").unwrap();
    assert_eq!((t.kind, t.number), (TargetKind::Issue, Some(1)));
    let t = parse_github_url("https://api.github.com/repos/o/r/pulls/comments/5").unwrap();
    assert_eq!((t.kind, t.id), (TargetKind::ReviewComment, Some(5)));
}

/// gh-aw logs create_project's `projectUrl` as the line's `url`, and may
/// write no `repo`: the line is the run's repository's (the defaults'), its
/// target the project under its owner, never a repository `orgs/{owner}`.
#[test]
fn a_project_url_names_the_owners_project_not_a_repository() {
    assert_eq!(
        parse_github_url("https://github.com/orgs/acme/projects/8"),
        None
    );
    assert_eq!(
        parse_github_url("https://github.com/users/carol/projects/3"),
        None
    );
    let r = one(
        r#"{"type":"create_project","url":"https://github.com/orgs/def/projects/8","title":"Triage","timestamp":"2026-05-31T12:00:00Z"}"#,
    );
    assert_eq!(r.repo, "def/repo");
    let t = r.target.expect("the project");
    assert_eq!(
        (t.repo.as_str(), t.kind, t.number),
        ("def", TargetKind::Project, Some(8))
    );
}
