//! `--json FIELDS` and `--jq EXPRESSION`, as `gh` has them: `--json` picks
//! the named fields of each object (the outcome record's own names, or the
//! report's), `--json` alone lists them, and `--jq` filters the JSON with a
//! jq expression (jaq, jq's language in Rust): a string result is printed
//! raw, anything else as compact JSON, one a line. Without `--jq` the picked
//! JSON is printed indented.
//!
//! jq's `@tsv` and `@csv` formats (which jaq's standard library lacks) are
//! defined here as jq has them, so `--jq '.[] | [.a, .b] | @tsv'` prints
//! tab-separated rows as with `gh`. A jq expression that does not parse or
//! names an unknown filter is a usage error in words.
//!
//! The JSON goes from our serializer to jaq as text, never through
//! `serde_json::Value` (whose objects sort their keys): an object keeps its
//! order, so `windows` stay in time order (1h, 24h, 7d, 30d).

use clap::Args;
use jaq_json::Val;
use serde::Serialize;

use super::exit::{emit, fail, Exit};

#[derive(Args, Debug, Clone, Default)]
pub struct JsonArgs {
    /// Print JSON with these comma-separated fields (--json alone lists them).
    #[arg(long, value_name = "FIELDS", num_args = 0..=1, default_missing_value = "")]
    pub json: Option<String>,
    /// Filter the JSON with a jq expression, e.g. '.[] | .safe_output_id' (needs --json).
    #[arg(long, value_name = "EXPRESSION", requires = "json")]
    pub jq: Option<String>,
}

impl JsonArgs {
    /// The fields asked for, each one of `available`; `None` without
    /// `--json`. `--json` alone, or a field that is not one, is a usage
    /// error that lists them.
    pub fn fields(&self, available: &[String]) -> anyhow::Result<Option<Vec<String>>> {
        let Some(asked) = &self.json else {
            return Ok(None);
        };
        let list = || format!("available fields:\n  {}", available.join("\n  "));
        let fields: Vec<String> = asked
            .split(',')
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .map(str::to_string)
            .collect();
        if fields.is_empty() {
            return Err(fail(
                Exit::Usage,
                format!("--json needs fields; {}", list()),
            ));
        }
        if let Some(bad) = fields.iter().find(|f| !available.contains(f)) {
            return Err(fail(
                Exit::Usage,
                format!("unknown JSON field {bad:?}; {}", list()),
            ));
        }
        Ok(Some(fields))
    }

    /// Print `fields` of `value` (of each element, when `value` is a list),
    /// then what `--jq` makes of it, if given.
    pub fn print<T: Serialize + ?Sized>(&self, value: &T, fields: &[String]) -> anyhow::Result<()> {
        let text = serde_json::to_string(value)?;
        let object = format!(
            "{{{}}}",
            fields
                .iter()
                .map(|f| format!("{0}: .[{0}]", serde_json::to_string(f).unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let pick = match text.starts_with('[') {
            true => format!("map({object})"),
            false => object,
        };
        let mut out = Vec::new();
        match &self.jq {
            None => {
                for v in run(&pick, &text)? {
                    pretty(&mut out, &v)?;
                }
            }
            Some(expression) => {
                let program = format!("{pick} | ({expression})");
                for v in run(&program, &text).map_err(|e| usage(expression, e))? {
                    match &v {
                        Val::TStr(_) => {
                            let quoted = v.to_string();
                            let raw: String = serde_json::from_str(&quoted).unwrap_or(quoted);
                            out.extend_from_slice(raw.as_bytes());
                        }
                        _ => out.extend_from_slice(v.to_string().as_bytes()),
                    }
                    out.push(b'\n');
                }
            }
        }
        emit(&String::from_utf8_lossy(&out))
    }
}

/// jq's `@tsv` and `@csv`: an array's values on one line (strings escaped
/// or quoted, `null` empty, anything else as JSON).
const FORMATS: &str = r#"
def __so_cell: if type == "string" then . elif . == null then "" else tojson end;
def @tsv: map(__so_cell | split("\\") | join("\\\\") | split("\t") | join("\\t")
    | split("\n") | join("\\n") | split("\r") | join("\\r")) | join("\t");
def @csv: map(if type == "string" then "\"" + (split("\"") | join("\"\"")) + "\""
    else __so_cell end) | join(",");
"#;

fn usage(expression: &str, e: anyhow::Error) -> anyhow::Error {
    fail(Exit::Usage, format!("--jq {expression:?}: {e}"))
}

/// `v` indented, as jq prints it, and a newline.
fn pretty(out: &mut Vec<u8>, v: &Val) -> anyhow::Result<()> {
    let pp = jaq_json::write::Pp {
        indent: Some("  ".to_string()),
        sep_space: true,
        ..Default::default()
    };
    jaq_json::write::write(out, &pp, 0, v)?;
    out.push(b'\n');
    Ok(())
}

/// The property names of the OpenAPI document's schema `name` (the record's
/// or the report's own field names), in their declared order.
pub(crate) fn schema_fields(name: &str) -> Vec<String> {
    let doc = serde_json::to_value(crate::http::openapi::openapi()).unwrap_or_default();
    doc["components"]["schemas"][name]["properties"]
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

/// Run the jq `program` on the JSON `input` text; its results.
pub fn run(program: &str, input: &str) -> anyhow::Result<Vec<Val>> {
    use jaq_core::load::{Arena, File, Loader};
    use jaq_core::{data, unwrap_valr, Compiler, Ctx, Vars};

    let input = jaq_json::read::parse_single(input.as_bytes())
        .map_err(|e| anyhow::anyhow!("reading the JSON: {e:?}"))?;
    let code = format!("{FORMATS}{program}");
    let file = File {
        code: code.as_str(),
        path: (),
    };
    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs());
    let funs = jaq_core::funs()
        .chain(jaq_std::funs())
        .chain(jaq_json::funs());
    let arena = Arena::default();
    let modules = Loader::new(defs)
        .load(&arena, file)
        .map_err(|_| anyhow::anyhow!("it is not a jq expression (a syntax error)"))?;
    let filter = Compiler::default()
        .with_funs(funs)
        .compile(modules)
        .map_err(|e| {
            let names = quoted_names(&format!("{e:?}"));
            anyhow::anyhow!("it names what jq does not know: {}", names.join(", "))
        })?;
    let ctx = Ctx::<data::JustLut<Val>>::new(&filter.lut, Vars::new([]));
    filter
        .id
        .run((ctx, input))
        .map(unwrap_valr)
        .map(|r| r.map_err(|e| anyhow::anyhow!("failed: {e}")))
        .collect()
}

/// The quoted names in a compile error's text (`("@tsvx", Filter(0))`):
/// the undefined filters, without the rest of its structure.
fn quoted_names(debug: &str) -> Vec<String> {
    let mut names: Vec<String> = debug
        .split("(\"")
        .skip(1)
        .filter_map(|rest| rest.split_once('"').map(|(name, _)| name.to_string()))
        .filter(|n| !n.is_empty() && !n.contains(['\n', '{']))
        .collect();
    names.dedup();
    if names.is_empty() {
        names.push("an undefined filter".into());
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(vs: Vec<Val>) -> Vec<String> {
        vs.iter().map(Val::to_string).collect()
    }

    #[test]
    fn fields_are_checked_and_listed() {
        let available = vec!["safe_output_id".to_string(), "outcome_status".to_string()];
        let args = |j: Option<&str>| JsonArgs {
            json: j.map(str::to_string),
            jq: None,
        };
        assert_eq!(args(None).fields(&available).unwrap(), None);
        assert_eq!(
            args(Some("outcome_status, safe_output_id"))
                .fields(&available)
                .unwrap(),
            Some(vec![
                "outcome_status".to_string(),
                "safe_output_id".to_string()
            ])
        );
        for bad in ["", "type", "outcome_status,signal"] {
            let e = args(Some(bad)).fields(&available).unwrap_err();
            assert_eq!(super::super::exit::exit_code(&e), 2, "{bad}");
            assert!(e.to_string().contains("safe_output_id"), "{e}");
        }
    }

    #[test]
    fn tsv_and_csv_print_rows_as_jq_does() {
        let v = r#"[{"a": "x\ty", "b": 2, "c": null, "d": "say \"hi\""}]"#;
        let raw = |vs: Vec<Val>| -> Vec<String> {
            vs.iter()
                .map(|v| serde_json::from_str(&v.to_string()).unwrap())
                .collect()
        };
        let out = run(".[] | [.a, .b, .c, .d] | @tsv", v).unwrap();
        assert_eq!(raw(out), ["x\\ty\t2\t\tsay \"hi\""]);
        let out = run(".[] | [.a, .b, .c, .d] | @csv", v).unwrap();
        assert_eq!(raw(out), ["\"x\ty\",2,,\"say \"\"hi\"\"\""]);
        let e = run(".[] | @nope", v).unwrap_err().to_string();
        assert!(e.contains("@nope") && !e.contains("Filter("), "{e}");
        let e = run(".[", v).unwrap_err().to_string();
        assert!(e.contains("syntax error"), "{e}");
    }

    #[test]
    fn jq_runs_and_keeps_object_order() {
        let v = r#"[{"safe_output_id": "a", "n": 1}, {"safe_output_id": "b", "n": 2}]"#;
        assert_eq!(
            strings(run(".[] | .safe_output_id", v).unwrap()),
            ["\"a\"", "\"b\""]
        );
        assert_eq!(strings(run("map(.n) | add", v).unwrap()), ["3"]);
        assert_eq!(
            strings(run("[.[] | select(.n > 1)] | length", v).unwrap()),
            ["1"]
        );
        assert!(run(".[", v).is_err());
        // Keys stay in the order written: windows in time order.
        let w = r#"{"windows": {"1h": 1, "24h": 2, "7d": 3, "30d": 4}, "a": 0}"#;
        assert_eq!(
            strings(run(r#"{"windows": .["windows"]}"#, w).unwrap()),
            [r#"{"windows":{"1h":1,"24h":2,"7d":3,"30d":4}}"#]
        );
    }
}
