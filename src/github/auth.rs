//! App credentials from the Probot-style settings (`APP_ID`, `PRIVATE_KEY` or
//! `PRIVATE_KEY_PATH`), and the App-level octocrab client built from them.
//!
//! A bad setting is a start-up error that names the variable, never a panic.
//! The key is checked by signing one JWT at start-up, because octocrab only
//! parses the PEM when the key is loaded and would fail on the first call.

use std::path::PathBuf;
use std::time::Duration;

use base64::Engine;
use octocrab::models::AppId;
use octocrab::{EncodingKey, Octocrab};

/// A setting that cannot be used; the message names the variable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ConfigError {
    pub variable: &'static str,
    pub message: String,
}

impl ConfigError {
    fn new(variable: &'static str, message: impl Into<String>) -> ConfigError {
        ConfigError {
            variable,
            message: message.into(),
        }
    }
}

/// A GitHub App's id and private key, checked.
#[derive(Clone)]
pub struct AppCredentials {
    app_id: u64,
    key: EncodingKey,
}

impl std::fmt::Debug for AppCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the key.
        f.debug_struct("AppCredentials")
            .field("app_id", &self.app_id)
            .finish_non_exhaustive()
    }
}

/// Connection and read timeouts of the API client: a hung GitHub becomes a
/// transient error the retry helper handles, never a stuck publisher.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const READ_TIMEOUT: Duration = Duration::from_secs(30);

impl AppCredentials {
    /// Read the App id and key. `PRIVATE_KEY` (a PEM, a PEM with `\n`
    /// escapes, or base64 of a PEM) wins over `PRIVATE_KEY_PATH`.
    pub fn from_config(
        app_id: &str,
        private_key: Option<crate::settings::Secret>,
        private_key_path: Option<PathBuf>,
    ) -> Result<AppCredentials, ConfigError> {
        let app_id = parse_app_id(app_id)?;
        let (variable, text) = match (private_key, private_key_path) {
            (Some(k), _) if !k.expose_secret().trim().is_empty() => {
                ("PRIVATE_KEY", k.expose_secret().to_string())
            }
            (_, Some(path)) => {
                let text = std::fs::read_to_string(&path).map_err(|e| {
                    ConfigError::new(
                        "PRIVATE_KEY_PATH",
                        format!("PRIVATE_KEY_PATH {}: cannot read it: {e}", path.display()),
                    )
                })?;
                ("PRIVATE_KEY_PATH", text)
            }
            _ => {
                return Err(ConfigError::new(
                    "PRIVATE_KEY",
                    "APP_ID is set but neither PRIVATE_KEY nor PRIVATE_KEY_PATH is",
                ))
            }
        };
        let what = if variable == "PRIVATE_KEY" {
            "PRIVATE_KEY is not a PEM RSA key (nor base64 of one)".to_string()
        } else {
            "PRIVATE_KEY_PATH does not hold a PEM RSA key".to_string()
        };
        let pem = pem_text(&text).ok_or_else(|| ConfigError::new(variable, what.clone()))?;
        let key = EncodingKey::from_rsa_pem(pem.as_bytes())
            .map_err(|e| ConfigError::new(variable, format!("{what}: {e}")))?;
        // Sign once: a PEM that parses but is no usable RSA key fails here.
        octocrab::auth::create_jwt(AppId(app_id), &key)
            .map_err(|e| ConfigError::new(variable, format!("{what}: {e}")))?;
        Ok(AppCredentials { app_id, key })
    }

    pub(crate) fn app_id(&self) -> u64 {
        self.app_id
    }

    /// The App-level client (JWT auth) for `api_url` (`GITHUB_API_URL`).
    /// Octocrab's own retries are compiled out (no `retry` feature): ours
    /// decide (`retry`). Call it inside a tokio runtime (octocrab spawns its
    /// service buffer).
    pub fn app_client(&self, api_url: &str) -> Result<Octocrab, ConfigError> {
        let bad_url = |e: &dyn std::fmt::Display| {
            ConfigError::new(
                "GITHUB_API_URL",
                format!("GITHUB_API_URL {api_url:?} is not a URL: {e}"),
            )
        };
        let uri: axum::http::Uri = api_url
            .trim_end_matches('/')
            .parse()
            .map_err(|e| bad_url(&e))?;
        if uri.scheme().is_none() || uri.host().is_none() {
            return Err(bad_url(&"it needs a scheme and a host"));
        }
        Octocrab::builder()
            .base_uri(uri)
            .map_err(|e| bad_url(&e))?
            .set_connect_timeout(Some(CONNECT_TIMEOUT))
            .set_read_timeout(Some(READ_TIMEOUT))
            .set_write_timeout(Some(READ_TIMEOUT))
            .app(AppId(self.app_id), self.key.clone())
            .build()
            .map_err(|e| ConfigError::new("GITHUB_API_URL", format!("building the client: {e}")))
    }
}

fn parse_app_id(raw: &str) -> Result<u64, ConfigError> {
    raw.trim()
        .parse::<u64>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or_else(|| {
            ConfigError::new(
                "APP_ID",
                format!("APP_ID must be the App's numeric id (a positive integer), got {raw:?}"),
            )
        })
}

/// The PEM text: as given, with literal `\n` escapes (common in env files)
/// turned into newlines, or decoded from base64.
fn pem_text(raw: &str) -> Option<String> {
    let trimmed = raw.trim();
    if trimmed.starts_with("-----BEGIN") {
        return Some(trimmed.replace("\\n", "\n"));
    }
    let compact: String = trimmed.split_whitespace().collect();
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(compact.as_bytes())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    text.trim()
        .starts_with("-----BEGIN")
        .then(|| text.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PEM: &str = include_str!("../../fixtures/github/test-app-key.pem");

    fn err(app_id: &str, key: Option<&str>) -> ConfigError {
        AppCredentials::from_config(app_id, key.map(Into::into), None).unwrap_err()
    }

    #[test]
    fn a_pem_its_escaped_form_and_its_base64_are_accepted() {
        let b64 = base64::engine::general_purpose::STANDARD.encode(PEM);
        let escaped = PEM.replace('\n', "\\n");
        for key in [PEM.to_string(), b64, escaped] {
            let creds = AppCredentials::from_config("42", Some(key.into()), None).unwrap();
            assert_eq!(creds.app_id(), 42);
        }
    }

    #[test]
    fn a_key_file_is_read_from_private_key_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key.pem");
        std::fs::write(&path, PEM).unwrap();
        assert!(AppCredentials::from_config("7", None, Some(path)).is_ok());
        let missing = dir.path().join("nope.pem");
        let e = AppCredentials::from_config("7", None, Some(missing)).unwrap_err();
        assert_eq!(e.variable, "PRIVATE_KEY_PATH");
    }

    #[test]
    fn a_bad_key_names_private_key() {
        for bad in [
            "not a key",
            "bm90IGEga2V5",
            "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----",
        ] {
            let e = err("42", Some(bad));
            assert_eq!(e.variable, "PRIVATE_KEY", "{bad}");
            assert!(
                e.to_string()
                    .starts_with("PRIVATE_KEY is not a PEM RSA key (nor base64 of one)"),
                "{e}"
            );
        }
    }

    #[test]
    fn a_bad_app_id_names_app_id() {
        for bad in ["", "abc", "-3", "0", "12.5"] {
            let e = err(bad, Some(PEM));
            assert_eq!(e.variable, "APP_ID");
            assert!(e.to_string().contains("APP_ID"), "{e}");
        }
    }

    #[test]
    fn no_key_at_all_is_an_error_not_a_panic() {
        let e = err("42", None);
        assert!(e.to_string().contains("PRIVATE_KEY"));
    }

    #[tokio::test]
    async fn a_bad_api_url_names_github_api_url() {
        let creds = AppCredentials::from_config("42", Some(PEM.into()), None).unwrap();
        let e = creds.app_client("not a url").unwrap_err();
        assert_eq!(e.variable, "GITHUB_API_URL");
        assert!(creds.app_client("http://127.0.0.1:9").is_ok());
    }
}
