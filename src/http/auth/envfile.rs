//! Writing the registered App's credentials to `.env` (Probot's variable
//! names), readable by the owner only (0600), never overwriting silently:
//! - no `.env` yet: it is created with the credentials;
//! - an `.env` that sets none of our variables: the credentials are appended
//!   (its other lines are kept);
//! - an `.env` that already sets one of them: it is left alone, and the
//!   credentials go to a new file beside it (`.env.app-ID`), which the page
//!   names.
//!
//! The file is written whole to a temporary file in the same folder and
//! renamed over, so a crash leaves the old or the new file, never half.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The variables the setup writes.
pub(crate) const VARIABLES: [&str; 5] = [
    "APP_ID",
    "PRIVATE_KEY",
    "WEBHOOK_SECRET",
    "GITHUB_CLIENT_ID",
    "GITHUB_CLIENT_SECRET",
];

/// Where the credentials went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Written {
    Created(PathBuf),
    Appended(PathBuf),
    /// The `.env` already configures an App: the credentials are in this
    /// other file.
    Beside {
        existing: PathBuf,
        written: PathBuf,
    },
}

impl Written {
    pub fn path(&self) -> &Path {
        match self {
            Written::Created(p) | Written::Appended(p) => p,
            Written::Beside { written, .. } => written,
        }
    }
}

/// A value as a double-quoted `.env` value (`\n`, `"` and `\` escaped).
pub fn quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The `.env` lines of `pairs`.
pub fn render(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={}\n", quote(v)))
        .collect()
}

/// Does this `.env` text set one of `VARIABLES`?
fn sets_ours(text: &str) -> bool {
    text.lines().any(|line| {
        let line = line.trim_start();
        let line = line.strip_prefix("export ").unwrap_or(line);
        line.split_once('=')
            .is_some_and(|(k, _)| VARIABLES.contains(&k.trim()))
    })
}

/// Write `pairs` (the App's credentials) for `app_id` to `path`, as above.
pub fn write(path: &Path, app_id: u64, pairs: &[(&str, &str)]) -> std::io::Result<Written> {
    let lines = render(pairs);
    let existing = match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    match existing {
        None => {
            replace(path, &lines)?;
            Ok(Written::Created(path.to_path_buf()))
        }
        Some(text) if !sets_ours(&text) => {
            let mut whole = text;
            if !whole.is_empty() && !whole.ends_with('\n') {
                whole.push('\n');
            }
            whole.push_str(&lines);
            replace(path, &whole)?;
            Ok(Written::Appended(path.to_path_buf()))
        }
        Some(_) => {
            let mut name = path.file_name().unwrap_or_default().to_os_string();
            name.push(format!(".app-{app_id}"));
            let beside = path.with_file_name(name);
            create_new(&beside, &lines)?;
            Ok(Written::Beside {
                existing: path.to_path_buf(),
                written: beside,
            })
        }
    }
}

fn open_private(path: &Path, create_new: bool) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if create_new {
        options.create_new(true);
    } else {
        options.create(true).truncate(true);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// A new file, 0600; an existing one is an error (never overwritten).
fn create_new(path: &Path, text: &str) -> std::io::Result<()> {
    let mut f = open_private(path, true)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()
}

/// Replace `path` whole with `text`, 0600, through a temporary file.
fn replace(path: &Path, text: &str) -> std::io::Result<()> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp-{}", std::process::id()));
    let tmp = path.with_file_name(name);
    let _ = std::fs::remove_file(&tmp);
    let result = (|| {
        let mut f = open_private(&tmp, true)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAIRS: [(&str, &str); 2] = [
        ("APP_ID", "7"),
        ("PRIVATE_KEY", "-----BEGIN X-----\nab\"c\\\n"),
    ];

    #[cfg(unix)]
    fn mode(p: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_new_env_is_created_private_and_an_unrelated_one_is_appended_to() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".env");
        assert_eq!(
            write(&path, 7, &PAIRS).unwrap(),
            Written::Created(path.clone())
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "APP_ID=\"7\"\nPRIVATE_KEY=\"-----BEGIN X-----\\nab\\\"c\\\\\\n\"\n"
        );
        #[cfg(unix)]
        assert_eq!(mode(&path), 0o600);

        let other = dir.path().join("other.env");
        std::fs::write(&other, "PORT=4000").unwrap();
        assert_eq!(
            write(&other, 7, &PAIRS).unwrap(),
            Written::Appended(other.clone())
        );
        let text = std::fs::read_to_string(&other).unwrap();
        assert!(text.starts_with("PORT=4000\nAPP_ID=\"7\"\n"), "{text}");
        #[cfg(unix)]
        assert_eq!(mode(&other), 0o600);
    }

    #[test]
    fn an_env_that_configures_an_app_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".env");
        std::fs::write(&path, "# mine\nexport APP_ID=1\n").unwrap();
        let w = write(&path, 7, &PAIRS).unwrap();
        let beside = dir.path().join(".env.app-7");
        assert_eq!(
            w,
            Written::Beside {
                existing: path.clone(),
                written: beside.clone()
            }
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "# mine\nexport APP_ID=1\n"
        );
        assert!(std::fs::read_to_string(&beside)
            .unwrap()
            .starts_with("APP_ID=\"7\""));
        // A second registration of the same App does not overwrite that file either.
        assert!(write(&path, 7, &PAIRS).is_err());
    }
}
