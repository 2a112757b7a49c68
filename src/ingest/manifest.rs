//! Ingest of gh-aw's `safe-output-items.jsonl` (the manifest): one
//! `ExecutionRecord` per executed safe output.
//!
//! Both the May 2026 and the Oct 2026 line shapes are accepted. Every field is
//! optional and the format only grows, so unknown fields and unknown `type`
//! strings are kept (in `extra`), and one bad line never spoils the others.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::model::OutputType;
use crate::model::{ident, ExecutionRecord, Target, TargetKind};

/// What the caller knows about the run the manifest came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManifestDefaults {
    pub repo: Option<String>,
    pub run_id: Option<u64>,
    pub workflow: Option<String>,
}

/// A line that could not become a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectedLine {
    /// 1-based line number in the body.
    pub line: usize,
    pub error: String,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParsedManifest {
    pub records: Vec<ExecutionRecord>,
    pub rejected: Vec<RejectedLine>,
}

/// Fields mapped onto `ExecutionRecord` and so left out of `extra`. The target
/// fields (`url`, `number`, `target`, `id`, ...) stay in `extra` as given,
/// since the `Target` built from them is a lossy reading.
const CONSUMED: &[&str] = &[
    "type",
    "repo",
    "workflow_run_id",
    "source_run_id",
    "workflow",
    "actor",
    "provider",
    "temporaryId",
    "labelsAdded",
    "labelsBefore",
];

/// Parse a manifest body. Blank lines are skipped; each other line counts for
/// the index (even when rejected), so ids are stable across re-posts.
pub fn parse_manifest(
    body: &str,
    defaults: &ManifestDefaults,
    received_at: DateTime<Utc>,
) -> ParsedManifest {
    let mut out = ParsedManifest::default();
    let mut parser = LineParser::new(defaults.clone(), received_at, usize::MAX);
    let mut splitter = LineSplitter::new(usize::MAX);
    let mut take = |line: RawLine<'_>| {
        match parser.parse(line) {
            Some(Ok(record)) => out.records.push(record),
            Some(Err(rejected)) => out.rejected.push(rejected),
            None => {}
        }
        Ok::<(), ()>(())
    };
    let _ = splitter.push(body.as_bytes(), &mut take);
    let _ = splitter.finish(&mut take);
    out
}

/// One line of a body as `LineSplitter` cuts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RawLine<'a> {
    /// 1-based line number in the body.
    pub number: usize,
    /// The line without its `\n`; `None` when it was longer than the cap
    /// (its bytes were not kept).
    pub bytes: Option<&'a [u8]>,
    /// The line's length in bytes.
    pub len: usize,
}

/// Cuts a body into lines as its bytes arrive, holding at most one line of
/// up to `max_line` bytes: a longer line is skipped to its end and handed on
/// without its bytes, so memory does not depend on the body.
#[derive(Debug)]
pub(crate) struct LineSplitter {
    max_line: usize,
    buf: Vec<u8>,
    /// Bytes of the current line (kept or not).
    len: usize,
    number: usize,
}

impl LineSplitter {
    pub(crate) fn new(max_line: usize) -> LineSplitter {
        LineSplitter {
            max_line,
            buf: Vec::new(),
            len: 0,
            number: 0,
        }
    }

    /// Feed bytes; `each` gets every line they complete, and may stop the
    /// splitting by returning an error.
    pub(crate) fn push<E>(
        &mut self,
        mut data: &[u8],
        each: &mut impl FnMut(RawLine<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        while let Some(end) = memchr::memchr(b'\n', data) {
            self.keep(&data[..end]);
            data = &data[end + 1..];
            self.emit(each)?;
        }
        self.keep(data);
        Ok(())
    }

    /// The body ended: hand on its last line if it had no `\n`.
    pub(crate) fn finish<E>(
        &mut self,
        each: &mut impl FnMut(RawLine<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.len > 0 {
            self.emit(each)?;
        }
        Ok(())
    }

    fn keep(&mut self, part: &[u8]) {
        self.len = self.len.saturating_add(part.len());
        if self.len <= self.max_line {
            self.buf.extend_from_slice(part);
        } else {
            self.buf = Vec::new();
        }
    }

    fn emit<E>(&mut self, each: &mut impl FnMut(RawLine<'_>) -> Result<(), E>) -> Result<(), E> {
        self.number += 1;
        let line = RawLine {
            number: self.number,
            bytes: (self.len <= self.max_line).then_some(self.buf.as_slice()),
            len: self.len,
        };
        let result = each(line);
        self.buf.clear();
        self.len = 0;
        result
    }
}

/// Turns the lines of one manifest into records, numbering the items.
#[derive(Debug)]
pub(crate) struct LineParser {
    defaults: ManifestDefaults,
    received_at: DateTime<Utc>,
    /// The splitter's cap, for the message of a line over it.
    max_line: usize,
    items: usize,
}

impl LineParser {
    pub(crate) fn new(
        defaults: ManifestDefaults,
        received_at: DateTime<Utc>,
        max_line: usize,
    ) -> LineParser {
        LineParser {
            defaults,
            received_at,
            max_line,
            items: 0,
        }
    }

    /// The run's repository, when the caller knows it (the post's `repo`,
    /// the OIDC token's, the harvested run's).
    pub(crate) fn run_repo(&self) -> Option<&str> {
        self.defaults.repo.as_deref()
    }

    /// Lines that were not blank so far (the manifest's items).
    pub(crate) fn items(&self) -> usize {
        self.items
    }

    /// The record of a line, why it was rejected, or `None` for a blank line.
    pub(crate) fn parse(
        &mut self,
        line: RawLine<'_>,
    ) -> Option<Result<ExecutionRecord, RejectedLine>> {
        let reject = |error: String| {
            Some(Err(RejectedLine {
                line: line.number,
                error,
            }))
        };
        let Some(bytes) = line.bytes else {
            self.items += 1;
            return reject(format!(
                "the line is {} bytes, more than the {} bytes a line may have",
                line.len, self.max_line
            ));
        };
        let text = match std::str::from_utf8(bytes) {
            Ok(text) if text.trim().is_empty() => return None,
            Ok(text) => text,
            Err(e) => {
                self.items += 1;
                return reject(format!("not UTF-8: {e}"));
            }
        };
        let index = self.items;
        self.items += 1;
        match parse_line(text, index, &self.defaults, self.received_at) {
            Ok(record) => Some(Ok(record)),
            Err(error) => reject(error),
        }
    }
}

fn parse_line(
    line: &str,
    index: usize,
    defaults: &ManifestDefaults,
    received_at: DateTime<Utc>,
) -> Result<ExecutionRecord, String> {
    let value: Value =
        serde_json::from_str(line.trim()).map_err(|e| format!("not valid JSON: {e}"))?;
    let Value::Object(obj) = value else {
        return Err("not a JSON object".to_string());
    };
    let output_type = match obj.get("type") {
        Some(Value::String(t)) if !t.trim().is_empty() => t.trim().to_string(),
        _ => return Err("no `type` string".to_string()),
    };
    ident::output_type(&output_type).map_err(|e| e.to_string())?;
    check_numbers(&obj)?;

    let provider = provider_of(&obj, &output_type);
    let is_github = provider.is_none();
    let url = first_str(
        &obj,
        &[
            "url",
            "html_url",
            "issue_url",
            "pull_request_url",
            "review_url",
        ],
    );
    // A Jira or Linear URL has no owner/repo in its path.
    let parsed_url = url
        .as_deref()
        .filter(|_| is_github)
        .and_then(parse_github_url);
    let oct_target = obj.get("target").and_then(Value::as_object);

    // Outside GitHub, `target.repository` names a Jira/Linear/ADO project.
    let repo = str_field(&obj, "repo")
        .or_else(|| {
            oct_target
                .filter(|_| is_github)
                .and_then(|t| str_field(t, "repository"))
        })
        .or_else(|| parsed_url.as_ref().map(|t| t.repo.clone()))
        .or_else(|| defaults.repo.clone())
        .ok_or_else(|| {
            "no repo: no `repo`, `target.repository`, GitHub URL, or default repo".to_string()
        })?;

    let run_id = ["workflow_run_id", "source_run_id"]
        .iter()
        .find_map(|k| obj.get(*k).and_then(crate::model::wire::github_id))
        .or(defaults.run_id);

    let timestamp = obj.get("timestamp").and_then(Value::as_str).and_then(|s| {
        DateTime::parse_from_rfc3339(s.trim())
            .ok()
            .map(|t| t.with_timezone(&Utc))
    });
    // A time outside the sane range is refused, not stored (`sane_time`).
    if let Some(t) = timestamp {
        crate::model::sane_time::check("timestamp", t).map_err(|e| e.to_string())?;
    }

    let target = if is_github {
        let found = build_target(&obj, &repo, &output_type, parsed_url, url, oct_target);
        crate::ingest::targets::refine(&output_type, &obj, &repo, found)
    } else {
        None
    };

    let before_state = object_field(&obj, "before_state");
    let labels_added = match obj.get("labelsAdded") {
        Some(v) => names(v),
        None if matches!(
            OutputType::from(output_type.as_str()),
            OutputType::AddLabels
        ) =>
        {
            obj.get("labels").map(names).unwrap_or_default()
        }
        None => Vec::new(),
    };
    let labels_before = obj
        .get("labelsBefore")
        .map(names)
        .or_else(|| before_state.get("labels").map(names));

    let mut extra = Map::new();
    for (k, v) in &obj {
        let mapped = CONSUMED.contains(&k.as_str())
            || (k == "timestamp" && timestamp.is_some())
            || (matches!(k.as_str(), "before_state" | "after_state" | "metadata") && v.is_object());
        if !mapped {
            extra.insert(k.clone(), v.clone());
        }
    }

    let workflow = str_field(&obj, "workflow").or_else(|| defaults.workflow.clone());
    check_identifiers(&repo, run_id, workflow.as_deref(), target.as_ref())?;

    Ok(ExecutionRecord {
        id: ExecutionRecord::output_id(&repo, run_id, &index.to_string()),
        output_type,
        repo,
        run_id,
        index: Some(index as u64),
        workflow,
        target,
        executed_at: timestamp.unwrap_or(received_at),
        actor: obj.get("actor").and_then(login_of),
        provider,
        temporary_id: str_field(&obj, "temporaryId"),
        before_state,
        after_state: object_field(&obj, "after_state"),
        metadata: object_field(&obj, "metadata"),
        labels_added,
        labels_before,
        extra,
        sources: crate::model::execution::Sources {
            manifest: true,
            webhook: false,
        },
    })
}

/// Fields that hold an issue, PR, comment or run number: when one is given
/// as a number it must be in 1..=i64::MAX (a `0` or `-3` is refused, not read
/// as "no number").
const NUMBER_FIELDS: &[&str] = &[
    "number",
    "issue_number",
    "pull_request_number",
    "prNumber",
    "itemNumber",
    "commentId",
    "id",
    "workflow_run_id",
    "source_run_id",
];

fn check_numbers(obj: &Map<String, Value>) -> Result<(), String> {
    let target_number = obj
        .get("target")
        .and_then(Value::as_object)
        .and_then(|t| t.get("number"));
    let given = NUMBER_FIELDS
        .iter()
        .filter_map(|k| obj.get(*k).map(|v| (*k, v)))
        .chain(target_number.map(|v| ("target.number", v)));
    for (key, value) in given {
        ident::json_number("number", value).map_err(|e| format!("`{key}`: {e}"))?;
    }
    Ok(())
}

/// The record's repository, run, workflow and target, checked before it is
/// stored (see `model::ident`).
fn check_identifiers(
    repo: &str,
    run_id: Option<u64>,
    workflow: Option<&str>,
    target: Option<&Target>,
) -> Result<(), String> {
    let shown = |e: ident::IdentError| e.to_string();
    ident::repo(repo).map_err(shown)?;
    if let Some(run) = run_id {
        ident::number("run id", run).map_err(shown)?;
    }
    if let Some(w) = workflow {
        ident::workflow_name(w).map_err(shown)?;
    }
    if let Some(t) = target {
        // Org- and user-level objects (projects) are filed under the owner.
        let checked = if t.repo.contains('/') {
            ident::repo(&t.repo)
        } else {
            ident::owner(&t.repo)
        };
        checked.map_err(|e| format!("target {e}"))?;
        for n in [t.number, t.id, t.parent_number].into_iter().flatten() {
            ident::number("target number", n).map_err(shown)?;
        }
    }
    Ok(())
}

/// `provider` or `target.provider`, else implied by a provider-prefixed type;
/// `None` means GitHub.
fn provider_of(obj: &Map<String, Value>, output_type: &str) -> Option<String> {
    let given = str_field(obj, "provider").or_else(|| {
        obj.get("target")
            .and_then(Value::as_object)
            .and_then(|t| str_field(t, "provider"))
    });
    let given = given.or_else(|| {
        [
            ("ado_", "azure-devops"),
            ("jira_", "jira"),
            ("linear_", "linear"),
        ]
        .iter()
        .find(|(prefix, _)| output_type.starts_with(prefix))
        .map(|(_, p)| p.to_string())
    });
    given.filter(|p| !p.eq_ignore_ascii_case("github"))
}

/// The target: from the URL, else the Oct `target` object, else `number`.
fn build_target(
    obj: &Map<String, Value>,
    repo: &str,
    output_type: &str,
    parsed_url: Option<Target>,
    url: Option<String>,
    oct_target: Option<&Map<String, Value>>,
) -> Option<Target> {
    let comment_id = ["commentId", "id"]
        .iter()
        .find_map(|k| obj.get(*k).and_then(crate::model::wire::github_id));
    let number = [
        "number",
        "issue_number",
        "pull_request_number",
        "prNumber",
        "itemNumber",
    ]
    .iter()
    .find_map(|k| obj.get(*k).and_then(crate::model::wire::github_id));
    let fallback_used = obj.get("fallback_used").and_then(Value::as_bool) == Some(true);
    let pr_kind = if output_type.contains("pull_request") && !fallback_used {
        TargetKind::PullRequest
    } else {
        TargetKind::Issue
    };

    let mut target = parsed_url
        .or_else(|| oct_target.and_then(|t| from_oct_target(t, repo, number, comment_id, pr_kind)))
        .or_else(|| number.map(|n| Target::thread(repo, pr_kind, n)));

    // add_comment: the manifest names the comment by id; the URL or number is its thread.
    if output_type == "add_comment" {
        if let (Some(t), Some(id)) = (&target, comment_id) {
            if t.kind.is_thread() {
                target = Some(Target::comment(repo, TargetKind::Comment, id, t.number));
            }
        }
    }
    if let Some(t) = &mut target {
        t.url = url;
    }
    target
}

/// The Oct 2026 `target: {repository, number, kind}` object. Its
/// `repository` is the target's, even when the line's `repo` names another
/// (a cross-repository write; the tenancy rule decides whether it may be).
fn from_oct_target(
    t: &Map<String, Value>,
    repo: &str,
    number: Option<u64>,
    comment_id: Option<u64>,
    default_kind: TargetKind,
) -> Option<Target> {
    let named = t.get("repository").and_then(Value::as_str);
    let repo = named.filter(|r| r.contains('/')).unwrap_or(repo);
    let number = t
        .get("number")
        .and_then(crate::model::wire::github_id)
        .or(number);
    let kind = t
        .get("kind")
        .and_then(Value::as_str)
        .and_then(kind_from_str)
        .unwrap_or(default_kind);
    match kind {
        TargetKind::Repository => Some(repo_target(repo)),
        k if k.is_thread() || k == TargetKind::Discussion => Some(Target::thread(repo, k, number?)),
        TargetKind::Ref => None,
        k => Some(Target::comment(repo, k, comment_id?, number)),
    }
}

fn kind_from_str(s: &str) -> Option<TargetKind> {
    Some(match s.to_ascii_lowercase().replace('-', "_").as_str() {
        "issue" => TargetKind::Issue,
        "pull_request" | "pull" | "pr" => TargetKind::PullRequest,
        "comment" | "issue_comment" => TargetKind::Comment,
        "review" | "pull_request_review" => TargetKind::Review,
        "review_comment" | "pull_request_review_comment" => TargetKind::ReviewComment,
        "discussion" => TargetKind::Discussion,
        "discussion_comment" => TargetKind::DiscussionComment,
        "repository" | "repo" => TargetKind::Repository,
        _ => return None,
    })
}

/// Read a GitHub (or GHES) web or REST URL into a target; `url` is left unset.
///
/// Web: `/o/r/{pull|issues|discussions}/N[#fragment]`. REST:
/// `[/api/v3]/repos/o/r/{pulls|issues}/N[/reviews/ID]` and
/// `/repos/o/r/{issues|pulls}/comments/ID`. Any other `/o/r/...` path gives a
/// `Repository` target; an owner's path (`/orgs/o/…`, `/users/u/…`) none.
pub(crate) fn parse_github_url(url: &str) -> Option<Target> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let (path, fragment) = match rest.split_once('#') {
        Some((p, f)) => (p, Some(f)),
        None => (rest, None),
    };
    let path = path.split('?').next().unwrap_or("");
    let mut segs: Vec<&str> = path.split('/').skip(1).filter(|s| !s.is_empty()).collect();
    if segs.starts_with(&["api", "v3"]) {
        segs.drain(..2);
    }
    if segs.first() == Some(&"repos") {
        segs.remove(0);
    }
    // `/orgs/{o}/…` and `/users/{u}/…` (a project's `projectUrl`, as
    // gh-aw's create_project logs it) name an owner, no repository: GitHub
    // reserves both words as logins.
    if matches!(segs.first(), Some(&("orgs" | "users"))) {
        return None;
    }
    let [owner, name, rest @ ..] = segs.as_slice() else {
        return None;
    };
    let repo = format!("{owner}/{name}");
    let num = |s: Option<&&str>| s.and_then(|s| s.parse::<u64>().ok());
    let thread = |kind, n| Some(Target::thread(&repo, kind, n));
    let target = match rest {
        ["issues" | "pulls", "comments", id, ..] => {
            let kind = if rest[0] == "pulls" {
                TargetKind::ReviewComment
            } else {
                TargetKind::Comment
            };
            num(Some(id)).map(|id| Target::comment(&repo, kind, id, None))
        }
        ["pulls" | "pull", n, "reviews", id, ..] => {
            num(Some(id)).map(|id| Target::comment(&repo, TargetKind::Review, id, num(Some(n))))
        }
        [kind @ ("pull" | "pulls" | "issues" | "discussions"), n, ..] => {
            let Some(n) = num(Some(n)) else {
                return Some(repo_target(&repo));
            };
            let kind = match *kind {
                "issues" => TargetKind::Issue,
                "discussions" => TargetKind::Discussion,
                _ => TargetKind::PullRequest,
            };
            fragment
                .and_then(|f| fragment_target(&repo, f, n))
                .or_else(|| thread(kind, n))
        }
        _ => None,
    };
    Some(target.unwrap_or_else(|| repo_target(&repo)))
}

fn repo_target(repo: &str) -> Target {
    Target {
        number: None,
        ..Target::thread(repo, TargetKind::Repository, 0)
    }
}

fn fragment_target(repo: &str, fragment: &str, parent: u64) -> Option<Target> {
    let kinds = [
        ("issuecomment-", TargetKind::Comment),
        ("discussion_r", TargetKind::ReviewComment),
        ("pullrequestreview-", TargetKind::Review),
        ("discussioncomment-", TargetKind::DiscussionComment),
    ];
    kinds.iter().find_map(|(prefix, kind)| {
        let id = fragment.strip_prefix(prefix)?.parse().ok()?;
        Some(Target::comment(repo, *kind, id, Some(parent)))
    })
}

fn str_field(obj: &Map<String, Value>, key: &str) -> Option<String> {
    obj.get(key)
        .and_then(crate::model::wire::trimmed_text)
        .map(str::to_string)
}

fn first_str(obj: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| str_field(obj, k))
}

fn object_field(obj: &Map<String, Value>, key: &str) -> Map<String, Value> {
    obj.get(key)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// Label names from `["a"]` or `[{"name":"a"}]`.
fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|items| crate::model::wire::label_names(items))
        .unwrap_or_default()
}

/// `"login"` or `{"login": ...}`.
fn login_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Value::Object(o) => str_field(o, "login"),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
