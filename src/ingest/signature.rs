//! Webhook signatures: HMAC-SHA256 of the raw body (`X-Hub-Signature-256`).
//! Verification is constant-time and accepts any of several secrets (rotation).

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::settings::Secret;

type HmacSha256 = Hmac<Sha256>;

/// The `sha256=<hex>` header value for a body.
pub fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac = HmacSha256::new_from_slice(secret.as_bytes()).expect("HMAC takes any key size");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// True when `header` is a valid `sha256=` signature of `body` under any secret.
pub(crate) fn verify(secrets: &[Secret], header: &str, body: &[u8]) -> bool {
    let Some(hex_sig) = header.trim().strip_prefix("sha256=") else {
        return false;
    };
    let Ok(expected) = hex::decode(hex_sig) else {
        return false;
    };
    // Check every secret, so timing does not reveal which one matched.
    let mut ok = false;
    for secret in secrets {
        let mut mac = HmacSha256::new_from_slice(secret.expose_secret().as_bytes())
            .expect("HMAC takes any key size");
        mac.update(body);
        ok |= mac.verify_slice(&expected).is_ok();
    }
    ok
}

/// Split a comma-separated `WEBHOOK_SECRET` into its secrets.
pub(crate) fn parse_secrets(value: &Secret) -> Vec<Secret> {
    value
        .expose_secret()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(Secret::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_githubs_documented_test_vector() {
        assert_eq!(
            sign("It's a Secret to Everybody", b"Hello, World!"),
            "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
        );
    }

    #[test]
    fn any_configured_secret_verifies() {
        let secrets = parse_secrets(&"old-secret, new-secret".into());
        let sig = sign("new-secret", b"body");
        assert!(verify(&secrets, &sig, b"body"));
        assert!(!verify(&secrets, &sig, b"other body"));
        assert!(!verify(&secrets, &sign("wrong", b"body"), b"body"));
        assert!(!verify(&secrets, "sha1=abc", b"body"));
        assert!(!verify(&secrets, "sha256=zz", b"body"));
        assert!(!verify(&[], &sig, b"body"));
    }
}
