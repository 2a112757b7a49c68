//! `Secret`: a string that never prints. Its `Debug` and `Display` write
//! `[REDACTED]`; the value comes out only through `expose_secret`, so every
//! place that uses one is a place a reader can find by that name.

use std::fmt;

/// A secret the App holds: a webhook secret, a bearer token, a private key,
/// an OAuth client secret, a signing key, a database URL with its password.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(String);

/// What `Debug` and `Display` print in place of the value.
pub const REDACTED: &str = "[REDACTED]";

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The value itself: for the one place it is used (a comparison, a
    /// MAC key, a connection), never for a log line.
    pub fn expose_secret(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Without surrounding whitespace (as a `.env` line may leave it).
    pub fn trimmed(&self) -> Secret {
        Secret(self.0.trim().to_string())
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Secret {
        Secret(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Secret {
        Secret(value.to_string())
    }
}

/// For clap: `--api-token T` / `API_TOKEN=T` parse straight into a `Secret`.
impl std::str::FromStr for Secret {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Secret, Self::Err> {
        Ok(Secret(s.to_string()))
    }
}

/// A secret in a JSON answer (GitHub's App manifest conversion).
impl<'de> serde::Deserialize<'de> for Secret {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Secret, D::Error> {
        String::deserialize(d).map(Secret)
    }
}

/// The value of an optional secret (`None` stays `None`).
pub fn exposed(secret: &Option<Secret>) -> Option<&str> {
    secret.as_ref().map(Secret::expose_secret)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_prints_redacted_and_exposes_only_on_request() {
        let s = Secret::from("hunter2");
        assert_eq!(format!("{s:?}"), REDACTED);
        assert_eq!(format!("{s}"), REDACTED);
        assert_eq!(format!("{:?}", Some(s.clone())), "Some([REDACTED])");
        assert_eq!(s.expose_secret(), "hunter2");
        assert_eq!(exposed(&Some(s)), Some("hunter2"));
        assert_eq!(
            " k ".parse::<Secret>().unwrap().trimmed().expose_secret(),
            "k"
        );
    }
}
