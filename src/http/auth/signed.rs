//! Signed values for cookies: `base64url(payload).base64url(HMAC-SHA256)`,
//! the payload ending in an expiry (unix seconds). The MAC covers a purpose
//! label too, so a value signed for one cookie is refused as another. Also
//! random tokens, CSRF tokens and the `Cookie`/`Set-Cookie` headers.

use axum::http::{header, HeaderMap};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

type HmacSha256 = Hmac<Sha256>;

/// Why a signed value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SignedError {
    #[error("malformed")]
    Malformed,
    #[error("bad signature")]
    BadSignature,
    #[error("expired")]
    Expired,
}

/// An HMAC key.
#[derive(Clone)]
pub struct Key([u8; 32]);

impl Key {
    /// The key of `SESSION_SECRET` (the same on every start and replica).
    pub fn derive(secret: &str) -> Key {
        let mut mac = HmacSha256::new_from_slice(secret.as_bytes()).expect("any key length");
        mac.update(b"safe-outcomes cookie key v1");
        Key(mac.finalize().into_bytes().into())
    }

    /// A key from 32 stored random bytes (`None` for any other length).
    pub(crate) fn from_bytes(bytes: &[u8]) -> Option<Key> {
        bytes.try_into().ok().map(Key)
    }

    /// A fresh random key.
    pub(crate) fn random() -> Key {
        Key(random_bytes())
    }

    fn mac(&self, purpose: &str, payload: &[u8]) -> Vec<u8> {
        let mut mac = HmacSha256::new_from_slice(&self.0).expect("any key length");
        mac.update(purpose.as_bytes());
        mac.update(b"\0");
        mac.update(payload);
        mac.finalize().into_bytes().to_vec()
    }

    /// Sign `value` for `purpose`, valid until `expires` (unix seconds).
    pub fn seal(&self, purpose: &str, value: &str, expires: i64) -> String {
        let payload = format!("{value}|{expires}");
        let sig = self.mac(purpose, payload.as_bytes());
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(payload),
            URL_SAFE_NO_PAD.encode(sig)
        )
    }

    /// The value of a sealed string, if its signature holds and it has not expired.
    pub(crate) fn open(&self, purpose: &str, sealed: &str) -> Result<String, SignedError> {
        let (payload, sig) = sealed.split_once('.').ok_or(SignedError::Malformed)?;
        let payload = URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|_| SignedError::Malformed)?;
        let sig = URL_SAFE_NO_PAD
            .decode(sig)
            .map_err(|_| SignedError::Malformed)?;
        let expected = self.mac(purpose, &payload);
        if !bool::from(expected.ct_eq(&sig)) {
            return Err(SignedError::BadSignature);
        }
        let payload = String::from_utf8(payload).map_err(|_| SignedError::Malformed)?;
        let (value, expires) = payload.rsplit_once('|').ok_or(SignedError::Malformed)?;
        let expires: i64 = expires.parse().map_err(|_| SignedError::Malformed)?;
        if now() >= expires {
            return Err(SignedError::Expired);
        }
        Ok(value.to_string())
    }

    /// The CSRF token of a session: a MAC of its id (forms carry it back).
    pub(crate) fn csrf(&self, session_id: &str) -> String {
        URL_SAFE_NO_PAD.encode(self.mac("csrf", session_id.as_bytes()))
    }

    /// Does `given` match the session's CSRF token (constant time)?
    pub(crate) fn csrf_matches(&self, session_id: &str, given: &str) -> bool {
        bool::from(self.csrf(session_id).as_bytes().ct_eq(given.as_bytes()))
    }
}

/// Unix seconds now.
pub(crate) fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// 32 bytes from the OS's random source.
pub(crate) fn random_bytes() -> [u8; 32] {
    let mut b = [0u8; 32];
    getrandom::getrandom(&mut b).expect("the OS random source");
    b
}

/// A random URL-safe token of 32 bytes.
pub(crate) fn random_token() -> String {
    URL_SAFE_NO_PAD.encode(random_bytes())
}

/// What the store files a secret value under (a session id, a flow state,
/// a read token): its SHA-256, hex, so the store never holds the value a
/// browser or a machine presents.
pub fn digest(value: &str) -> String {
    hex::encode(Sha256::digest(value.as_bytes()))
}

/// The PKCE S256 challenge of a verifier.
pub(crate) fn pkce_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// Constant-time equality of two strings.
pub(crate) fn same(a: &str, b: &str) -> bool {
    bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// The value of cookie `name` in the request's `Cookie` headers.
pub(crate) fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim().to_string())
}

/// A `Set-Cookie` value: HttpOnly, SameSite=Lax, Path=/, `Secure` when the
/// server is reached over https.
pub(crate) fn set_cookie(name: &str, value: &str, max_age: i64, secure: bool) -> String {
    format!(
        "{name}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age}{}",
        if secure { "; Secure" } else { "" }
    )
}

/// A `Set-Cookie` value that removes the cookie.
pub(crate) fn clear_cookie(name: &str, secure: bool) -> String {
    set_cookie(name, "", 0, secure)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_value_opens_only_unchanged_unexpired_and_for_its_purpose() {
        let key = Key::derive("s3cret");
        let sealed = key.seal("session", "abc", now() + 60);
        assert_eq!(key.open("session", &sealed).unwrap(), "abc");
        assert_eq!(
            key.open("setup", &sealed).unwrap_err(),
            SignedError::BadSignature
        );
        assert_eq!(
            Key::derive("other").open("session", &sealed).unwrap_err(),
            SignedError::BadSignature
        );
        let (payload, sig) = sealed.split_once('.').unwrap();
        let forged = URL_SAFE_NO_PAD.encode(format!("abd|{}", now() + 60));
        assert_eq!(
            key.open("session", &format!("{forged}.{sig}")).unwrap_err(),
            SignedError::BadSignature
        );
        assert_eq!(
            key.open("session", payload).unwrap_err(),
            SignedError::Malformed
        );
        let old = key.seal("session", "abc", now() - 1);
        assert_eq!(key.open("session", &old).unwrap_err(), SignedError::Expired);
    }

    #[test]
    fn csrf_tokens_belong_to_their_session() {
        let key = Key::random();
        let t = key.csrf("s1");
        assert!(key.csrf_matches("s1", &t));
        assert!(!key.csrf_matches("s2", &t));
        assert!(!key.csrf_matches("s1", ""));
    }

    #[test]
    fn cookies_are_read_from_any_cookie_header() {
        let mut h = HeaderMap::new();
        h.append(header::COOKIE, "a=1; so_session=xyz".parse().unwrap());
        h.append(header::COOKIE, "b=2".parse().unwrap());
        assert_eq!(cookie(&h, "so_session").as_deref(), Some("xyz"));
        assert_eq!(cookie(&h, "b").as_deref(), Some("2"));
        assert_eq!(cookie(&h, "c"), None);
        let c = set_cookie("so_session", "v", 60, true);
        assert!(c.contains("HttpOnly") && c.contains("SameSite=Lax") && c.contains("Secure"));
    }
}
