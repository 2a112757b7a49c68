//! Identifiers checked at the boundary: everything that comes in (a manifest
//! line, a query parameter, a webhook header) and names a repository, a
//! number, a delivery, an output type or a workflow is checked here before it
//! is stored, so what the rest of the system renders is known to be plain.
//!
//! The rules follow GitHub's own: an owner login is 1–39 of `[A-Za-z0-9-]`
//! not starting with `-`; a repository name is 1–100 of `[A-Za-z0-9._-]` and
//! not `.` or `..`; issue, PR, comment and run numbers are 1..=i64::MAX (GitHub
//! ids are signed 64-bit); a delivery id is GitHub's GUID, or any 1–64 of
//! `[A-Za-z0-9-]` (our own tools and tests send short ids of that shape).

use std::fmt;

/// Longest owner login GitHub allows.
pub(crate) const MAX_OWNER: usize = 39;
/// Longest repository name GitHub allows.
pub(crate) const MAX_REPO_NAME: usize = 100;
/// Longest output type we accept (`[a-z0-9_]`).
pub(crate) const MAX_OUTPUT_TYPE: usize = 64;
/// Longest delivery id we accept.
pub(crate) const MAX_DELIVERY_ID: usize = 64;
/// Longest workflow name we accept, in characters.
pub(crate) const MAX_WORKFLOW_NAME: usize = 256;
/// Longest name we accept inside a key (a branch, a tag, a workflow file).
pub(crate) const MAX_KEY_NAME: usize = 1024;

/// Why an identifier was refused; `Display` is the reason shown to the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentError {
    /// What was being checked (`repo`, `number`, `type`, …).
    pub what: &'static str,
    /// The value as given, quoted and truncated so the reason is safe to show.
    pub value: String,
    pub why: &'static str,
}

impl fmt::Display for IdentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.what, self.value, self.why)
    }
}

impl std::error::Error for IdentError {}

impl IdentError {
    /// A refusal of `value` (quoted and truncated for showing) as `what`.
    pub fn new(what: &'static str, value: &str, why: &'static str) -> IdentError {
        refuse(what, value, why)
    }
}

fn refuse(what: &'static str, value: &str, why: &'static str) -> IdentError {
    let shown: String = value.chars().take(80).collect();
    IdentError {
        what,
        value: format!("{shown:?}"),
        why,
    }
}

/// An owner login (user or organization).
pub fn owner(value: &str) -> Result<(), IdentError> {
    let ok_chars = value
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if value.is_empty() || value.len() > MAX_OWNER {
        Err(refuse("owner", value, "owner is not 1–39 characters long"))
    } else if !ok_chars {
        Err(refuse(
            "owner",
            value,
            "owner may only hold A-Z, a-z, 0-9 and -",
        ))
    } else if value.starts_with('-') {
        Err(refuse("owner", value, "owner may not start with -"))
    } else {
        Ok(())
    }
}

/// A repository name (the part after `owner/`).
pub fn repo_name(value: &str) -> Result<(), IdentError> {
    let ok_chars = value
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if value.is_empty() || value.len() > MAX_REPO_NAME {
        Err(refuse(
            "repository name",
            value,
            "name is not 1–100 characters long",
        ))
    } else if !ok_chars {
        Err(refuse(
            "repository name",
            value,
            "name may only hold A-Z, a-z, 0-9, '.', '_' and '-'",
        ))
    } else if value == "." || value == ".." {
        Err(refuse("repository name", value, "name may not be . or .."))
    } else {
        Ok(())
    }
}

/// A repository as `owner/name`.
pub fn repo(value: &str) -> Result<(), IdentError> {
    let Some((o, n)) = value.split_once('/') else {
        return Err(refuse("repo", value, "is not owner/name"));
    };
    let whole = |e: IdentError| refuse("repo", value, e.why);
    owner(o).map_err(whole)?;
    repo_name(n).map_err(whole)
}

/// The owner part of a valid `owner/name` (the whole string when it names
/// an owner alone).
pub fn owner_of(repo: &str) -> &str {
    repo.split_once('/').map_or(repo, |(o, _)| o)
}

/// A name that goes into a store key after its repository: a branch, a tag,
/// a workflow file, a commit sha, a node id. At most `MAX_KEY_NAME` bytes
/// and no control character (NUL separates a key's parts in the store, so
/// a name holding one could reach into another object's keys).
pub fn key_name(what: &'static str, value: &str) -> Result<(), IdentError> {
    if value.len() > MAX_KEY_NAME {
        Err(refuse(what, value, "is longer than 1024 bytes"))
    } else if value.chars().any(char::is_control) {
        Err(refuse(what, value, "holds a control character"))
    } else {
        Ok(())
    }
}

/// The key observations of an object are filed under (`{owner/name}#…`, or
/// `{owner}#…` for an owner's own objects such as its projects): the
/// repository or owner by `repo` or `owner`, the rest by `key_name`.
pub fn target_key(key: &str) -> Result<(), IdentError> {
    let Some((repo_part, rest)) = key.split_once('#') else {
        return Err(refuse("key", key, "names no object after its repository"));
    };
    if repo_part.contains('/') {
        repo(repo_part)?;
    } else {
        owner(repo_part)?;
    }
    key_name("key", rest)
}

/// An issue, PR, comment, review or run number: 1..=i64::MAX.
pub fn number(what: &'static str, value: u64) -> Result<u64, IdentError> {
    if value == 0 || value > i64::MAX as u64 {
        Err(refuse(
            what,
            &value.to_string(),
            "is not in 1..=9223372036854775807",
        ))
    } else {
        Ok(value)
    }
}

/// A number given in JSON: an integer or a decimal string in 1..=i64::MAX.
/// `Ok(None)` for a value that is not meant as a number at all (another
/// string, null), which callers treat as absent, as before.
pub fn json_number(
    what: &'static str,
    value: &serde_json::Value,
) -> Result<Option<u64>, IdentError> {
    use serde_json::Value;
    let text = match value {
        Value::Number(n) => n.to_string(),
        Value::String(s) if looks_numeric(s.trim()) => s.trim().to_string(),
        _ => return Ok(None),
    };
    match text.parse::<i128>() {
        Ok(n) if n >= 1 && n <= i64::MAX as i128 => Ok(Some(n as u64)),
        _ => Err(refuse(
            what,
            &text,
            "is not a whole number in 1..=9223372036854775807",
        )),
    }
}

fn looks_numeric(s: &str) -> bool {
    let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit() || b == b'.')
}

/// A checked `X-GitHub-Delivery` id: only `FromStr` (which runs
/// `delivery_id`) makes one, so holding one means it passed the check. It
/// holds the id in lowercase: a GUID is the same GUID in either case, so
/// `72D3…` and `72d3…` are one delivery (deduped as one).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(transparent)]
pub struct DeliveryId(String);

impl DeliveryId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for DeliveryId {
    type Err = IdentError;

    fn from_str(value: &str) -> Result<DeliveryId, IdentError> {
        delivery_id(value)?;
        Ok(DeliveryId(value.to_ascii_lowercase()))
    }
}

impl std::fmt::Display for DeliveryId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for DeliveryId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<DeliveryId, D::Error> {
        let value = String::deserialize(d)?;
        value.parse().map_err(serde::de::Error::custom)
    }
}

/// A delivery id as GitHub makes them: a version-1 (time-based) UUID, in
/// lowercase (OpenAPI's `hook-delivery.guid` examples
/// "58474f00-b361-11eb-836d-0e4f3503ccbe" and "0b989ba4-242f-11e5-81e1-c7b6966d2516"),
/// of a time in 100 ns ticks since 1582-10-15 (60 bits), a clock sequence
/// (14 bits) and a node (48 bits). The benches and tests send these.
pub fn time_based_delivery_id(ticks: u64, clock_seq: u16, node: u64) -> String {
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        ticks & 0xffff_ffff,
        (ticks >> 32) & 0xffff,
        0x1000 | ((ticks >> 48) & 0x0fff),
        0x8000 | (clock_seq & 0x3fff),
        node & 0xffff_ffff_ffff
    )
}

/// An `X-GitHub-Delivery` id: 1–64 of `[A-Za-z0-9-]` (a GUID fits).
pub fn delivery_id(value: &str) -> Result<(), IdentError> {
    let ok = !value.is_empty()
        && value.len() <= MAX_DELIVERY_ID
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(refuse(
            "X-GitHub-Delivery",
            value,
            "is not a GUID (1–64 of A-Z, a-z, 0-9 and -)",
        ))
    }
}

/// A safe-output type, gh-aw's or a custom one: 1–64 of `[a-z0-9_]`.
pub fn output_type(value: &str) -> Result<(), IdentError> {
    let ok = !value.is_empty()
        && value.len() <= MAX_OUTPUT_TYPE
        && value
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(refuse("type", value, "is not 1–64 of a-z, 0-9 and _"))
    }
}

/// A workflow name: free text, but bounded and without control characters
/// (nor bidirectional overrides, which reorder what a reader sees).
pub fn workflow_name(value: &str) -> Result<(), IdentError> {
    if value.chars().count() > MAX_WORKFLOW_NAME {
        Err(refuse("workflow", value, "is longer than 256 characters"))
    } else if value.chars().any(is_hidden_control) {
        Err(refuse("workflow", value, "holds control characters"))
    } else {
        Ok(())
    }
}

/// Control characters (C0, DEL, C1) and the Unicode format characters that
/// reorder or hide text (bidi embeddings, overrides and isolates, zero-width
/// marks, the BOM, line and paragraph separators).
pub fn is_hidden_control(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2069}'
                | '\u{FEFF}'
                | '\u{061C}'
        )
}

/// A fresh random UUID (version 4), the form opentraces wants for `trace_id`.
pub fn new_trace_id() -> String {
    let mut b = [0u8; 16];
    getrandom::getrandom(&mut b).expect("the OS random source works");
    uuid_string(b)
}

/// 16 bytes as a version-4, RFC 4122 variant UUID string.
pub fn uuid_string(mut b: [u8; 16]) -> String {
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex::encode(b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn target_keys_check_their_repository_and_their_name() {
        for good in [
            "o/r#7",
            "o/r#ref:feature/x-ü",
            "o/r#commit:abc123",
            "octo#project:PVT_1",
            "o/r#repo",
            "o/r#workflow:ci.lock.yml",
            "o/r#ref:a#b",
        ] {
            assert_eq!(target_key(good), Ok(()), "{good}");
        }
        let long = format!("o/r#ref:{}", "a".repeat(MAX_KEY_NAME));
        for bad in [
            "o/r",
            "o/r:1#7",
            "o/r x#7",
            "-o#project:1",
            "o/r#ref:main\0\u{1}",
            "o/r#ref:a\u{85}b",
            long.as_str(),
        ] {
            assert!(target_key(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn repos_follow_githubs_charset_and_lengths() {
        for good in [
            "o/r",
            "octo-org/hello.world",
            "A1/_x-y.z",
            "a/..a",
            "x/.github",
        ] {
            assert_eq!(repo(good), Ok(()), "{good}");
        }
        let long_owner = format!("{}/r", "a".repeat(40));
        let long_name = format!("o/{}", "a".repeat(101));
        for bad in [
            "",
            "o",
            "/r",
            "o/",
            "-o/r",
            "o/.",
            "o/..",
            "o/r/x",
            "o r/x",
            "o/r x",
            "o/](https://evil)",
            "o/<img src=x>",
            "o/r\u{1b}[31m",
            "ö/r",
            "o/r\r",
            "@org/team",
            &long_owner,
            &long_name,
        ] {
            assert!(repo(bad).is_err(), "{bad:?} should be refused");
        }
        assert_eq!(
            repo(&format!("{}/{}", "a".repeat(39), "b".repeat(100))),
            Ok(())
        );
    }

    #[test]
    fn numbers_are_positive_and_fit_a_signed_64_bit_id() {
        assert_eq!(number("number", 1), Ok(1));
        assert!(number("number", 0).is_err());
        assert!(number("number", i64::MAX as u64 + 1).is_err());
        assert_eq!(json_number("number", &json!(5)), Ok(Some(5)));
        assert_eq!(json_number("number", &json!("7")), Ok(Some(7)));
        assert_eq!(json_number("number", &json!("aw_x")), Ok(None));
        assert_eq!(json_number("number", &json!(null)), Ok(None));
        for bad in [
            json!(0),
            json!(-3),
            json!("-3"),
            json!(1.5),
            json!("0"),
            json!(u64::MAX),
        ] {
            assert!(json_number("number", &bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn delivery_ids_are_guids_or_short_safe_strings() {
        assert_eq!(delivery_id("72d3162e-cc78-11e3-81ab-4c9367dc0958"), Ok(()));
        let made = time_based_delivery_id(0x1eb_b361_5847_4f00, 0x036d, 0x0e4f_3503_ccbe);
        assert_eq!(
            made, "58474f00-b361-11eb-836d-0e4f3503ccbe",
            "GitHub's example"
        );
        assert_eq!(delivery_id(&made), Ok(()));
        assert_eq!(delivery_id("d-1"), Ok(()));
        for bad in ["", "a b", "x\r\ny", "../../etc", "<img>", &"a".repeat(65)] {
            assert!(delivery_id(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn output_types_are_snake_case_and_bounded() {
        assert_eq!(output_type("create_pull_request"), Ok(()));
        assert_eq!(output_type("my_custom_type2"), Ok(()));
        for bad in [
            "",
            "Create",
            "a-b",
            "x\u{1b}[31m",
            "a b",
            "`x`",
            &"a".repeat(65),
        ] {
            assert!(output_type(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn workflow_names_are_bounded_and_visible() {
        assert_eq!(workflow_name("CI coach · nightly (v2)"), Ok(()));
        for bad in [
            "a\u{1b}[2J",
            "a\rb",
            "a\u{202E}b",
            "a\u{7}",
            &"w".repeat(257),
        ] {
            assert!(workflow_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_reason_quotes_the_value_safely() {
        let e = repo("o/r\u{1b}[31m").unwrap_err().to_string();
        assert!(e.starts_with("repo \"o/r\\u{1b}[31m\""), "{e}");
        assert!(!e.contains('\u{1b}'));
    }

    #[test]
    fn a_delivery_id_is_made_only_by_passing_the_check() {
        let id: DeliveryId = "72d3162e-cc78-11e3-81ab-4c9367dc0958".parse().unwrap();
        assert_eq!(id.to_string(), "72d3162e-cc78-11e3-81ab-4c9367dc0958");
        assert!("not a guid".parse::<DeliveryId>().is_err());
        let upper: DeliveryId = "72D3162E-CC78-11E3-81AB-4C9367DC0958".parse().unwrap();
        assert_eq!(upper, id, "one GUID, whatever its case");
        assert_eq!(
            serde_json::to_string(&id).unwrap(),
            "\"72d3162e-cc78-11e3-81ab-4c9367dc0958\""
        );
        assert!(serde_json::from_str::<DeliveryId>("\"x/y\"").is_err());
    }
}
