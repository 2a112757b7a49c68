//! GitHub Actions OIDC tokens: the server verifies them for manifest ingest
//! (a workflow posts its own manifest without a shared secret), and
//! `safe-outcomes record` requests one inside a workflow run.
//!
//! Verification: RS256 only; the signing key is looked up by `kid` in the
//! issuer's JWKS, fetched from `{issuer}/.well-known/jwks` (the URL GitHub
//! documents for github.com and GHES alike; we skip the discovery document so
//! one request, not two, stands between a cold cache and a verified token).
//! The key set (a `jsonwebtoken::jwk::JwkSet`) is cached for `jwks_ttl` and
//! refetched earlier only when a token names a `kid` we do not have (GitHub
//! rotates keys), at most once per `min_refetch`, so a flood of forged `kid`s
//! cannot make us hammer GitHub. The registered claims are checked by
//! jsonwebtoken itself, from [`OidcConfig::validation`] (`iss`, `aud`, `exp`
//! required; `exp` and `nbf` with [`LEEWAY_SECS`]); what it does not check
//! (`iat` not in the future, a non-empty `repository`) is
//! [`check_actions_claims`], a pure function of the claims and the time.
//!
//! A valid token proves only which repository's workflow minted it, and any
//! repository on github.com can mint one for our audience. [`authorize_owner`]
//! decides whether that repository's owner may post at all: it must be an
//! account the App is installed on, or one named in `OIDC_ALLOWED_OWNERS`,
//! matched by `repository_owner_id` when both sides know the id (ids survive
//! renames; a login can be taken by someone else).

use std::time::{Duration, Instant};

use jsonwebtoken::errors::{Error as JwtError, ErrorKind};
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The issuer of github.com's Actions tokens.
pub(crate) const GITHUB_ACTIONS_ISSUER: &str = "https://token.actions.githubusercontent.com";

/// Clock skew tolerated on `exp`, `nbf` and `iat`, in seconds.
pub(crate) const LEEWAY_SECS: u64 = 60;

/// What a verifier accepts.
#[derive(Debug, Clone)]
pub struct OidcConfig {
    /// `iss` must equal this (trailing `/` ignored); the JWKS is found under it.
    pub issuer: String,
    /// `aud` must be, or contain, this.
    pub audience: String,
    /// How long a fetched key set is trusted before it is fetched again.
    pub jwks_ttl: Duration,
    /// Least time between two fetches caused by an unknown `kid`.
    pub min_refetch: Duration,
    /// Owners whose tokens are accepted besides the App's installations
    /// (`OIDC_ALLOWED_OWNERS`): logins, or numeric account ids.
    pub allowed_owners: Vec<String>,
}

impl OidcConfig {
    pub fn new(issuer: &str, audience: &str) -> OidcConfig {
        OidcConfig {
            issuer: issuer.trim_end_matches('/').to_string(),
            audience: audience.to_string(),
            jwks_ttl: Duration::from_secs(3600),
            min_refetch: Duration::from_secs(60),
            allowed_owners: Vec::new(),
        }
    }

    /// The same, also accepting these owners (logins or ids; blanks dropped).
    pub fn with_allowed_owners<S: AsRef<str>>(mut self, owners: &[S]) -> OidcConfig {
        self.allowed_owners = owners
            .iter()
            .map(|o| o.as_ref().trim().to_string())
            .filter(|o| !o.is_empty())
            .collect();
        self
    }

    pub(crate) fn jwks_url(&self) -> String {
        format!("{}/.well-known/jwks", self.issuer)
    }

    /// What jsonwebtoken checks for us: RS256 only; `iss` is our issuer
    /// (with or without a trailing `/`); `aud` is, or contains, our audience;
    /// `exp`, `iss` and `aud` are required; `exp` and `nbf` hold with
    /// [`LEEWAY_SECS`] of skew.
    pub(crate) fn validation(&self) -> Validation {
        let mut validation = Validation::new(Algorithm::RS256);
        validation.set_issuer(&[self.issuer.clone(), format!("{}/", self.issuer)]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.leeway = LEEWAY_SECS;
        validation.validate_exp = true;
        validation.validate_nbf = true;
        validation.validate_aud = true;
        validation
    }
}

/// The claims of a GitHub Actions OIDC token we use or show. GitHub sends
/// numbers (`run_id`, `repository_id`) as strings; every field but the
/// registered ones is optional so a new token shape never fails to parse.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ActionsClaims {
    #[serde(default)]
    pub iss: String,
    /// A string or an array of strings.
    #[serde(default)]
    pub aud: Value,
    #[serde(default)]
    pub sub: String,
    pub exp: Option<i64>,
    pub nbf: Option<i64>,
    pub iat: Option<i64>,
    #[serde(default)]
    pub repository: String,
    pub repository_owner: Option<String>,
    pub repository_owner_id: Option<String>,
    pub repository_id: Option<String>,
    pub run_id: Option<String>,
    pub run_attempt: Option<String>,
    pub workflow: Option<String>,
    pub workflow_ref: Option<String>,
    #[serde(rename = "ref")]
    pub git_ref: Option<String>,
    pub sha: Option<String>,
    pub actor: Option<String>,
    pub event_name: Option<String>,
    pub job_workflow_ref: Option<String>,
}

impl ActionsClaims {
    /// `run_id` as a number, when it is one.
    pub fn run_id_number(&self) -> Option<u64> {
        self.run_id.as_deref().and_then(|s| s.trim().parse().ok())
    }
}

/// Why a token was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OidcError {
    /// The token is not acceptable (answer 401).
    #[error("{0}")]
    Invalid(String),
    /// We could not check it: the key set could not be fetched (answer 503).
    #[error("{0}")]
    Unavailable(String),
}

fn invalid(detail: impl Into<String>) -> OidcError {
    OidcError::Invalid(detail.into())
}

/// Verify `token`'s signature with `key` and its claims now (wall clock:
/// token expiry is a real-world matter, not one of the evaluation clock):
/// the registered ones by jsonwebtoken ([`OidcConfig::validation`]), then
/// [`check_actions_claims`].
pub(crate) fn decode_claims(
    token: &str,
    key: &DecodingKey,
    config: &OidcConfig,
) -> Result<ActionsClaims, OidcError> {
    let data = jsonwebtoken::decode::<ActionsClaims>(token, key, &config.validation())
        .map_err(|e| refusal(&e, config))?;
    check_actions_claims(&data.claims, chrono::Utc::now().timestamp())?;
    Ok(data.claims)
}

/// A jsonwebtoken refusal in words that name the claim at fault.
fn refusal(e: &JwtError, config: &OidcConfig) -> OidcError {
    invalid(match e.kind() {
        ErrorKind::InvalidSignature => "OIDC token signature does not verify".to_string(),
        ErrorKind::InvalidAlgorithm => "OIDC token algorithm is not RS256".to_string(),
        ErrorKind::ExpiredSignature => {
            format!("OIDC token expired (more than {LEEWAY_SECS}s ago)")
        }
        ErrorKind::ImmatureSignature => "OIDC token is not valid before its nbf time".to_string(),
        ErrorKind::InvalidIssuer => format!("OIDC token issuer is not {:?}", config.issuer),
        ErrorKind::InvalidAudience => format!(
            "OIDC token audience is not {:?} (request the token with that audience)",
            config.audience
        ),
        ErrorKind::MissingRequiredClaim(claim) => {
            format!("OIDC token has no valid {} claim", claim_name(claim))
        }
        ErrorKind::InvalidClaimFormat(claim) => {
            format!("OIDC token claim {} is not a time", claim_name(claim))
        }
        _ => format!("OIDC token is not valid: {e}"),
    })
}

/// A registered claim's name as an error shows it.
fn claim_name(claim: &str) -> String {
    match claim {
        "exp" => "expiry (exp)".to_string(),
        "nbf" => "not-before (nbf)".to_string(),
        "iss" => "issuer (iss)".to_string(),
        "aud" => "audience (aud)".to_string(),
        other => other.to_string(),
    }
}

/// What jsonwebtoken does not check, at `now` (Unix seconds): `iat` not in
/// the future beyond [`LEEWAY_SECS`], and a non-empty `repository`.
pub(crate) fn check_actions_claims(claims: &ActionsClaims, now: i64) -> Result<(), OidcError> {
    // Claims are numbers from outside: an i64 at either end must not overflow.
    let latest = now.saturating_add(LEEWAY_SECS as i64);
    if let Some(iat) = claims.iat.filter(|iat| *iat > latest) {
        return Err(invalid(format!(
            "OIDC token was issued in the future ({iat}, now {now})"
        )));
    }
    if claims.repository.trim().is_empty() {
        return Err(invalid("OIDC token has no repository claim"));
    }
    Ok(())
}

/// An account the App is installed on (an active installation), as known
/// from `installation` deliveries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct KnownAccount {
    pub login: Option<String>,
    pub id: Option<u64>,
}

/// Why an owner was let in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OwnerGrant {
    /// An installation of the App is on this account.
    Installation,
    /// `OIDC_ALLOWED_OWNERS` names it.
    AllowList,
}

/// The owner of the token's repository, as the claims give it: the login
/// (`repository_owner`, else the part of `repository` before `/`) and the id
/// (`repository_owner_id`). Refused when the two logins disagree or the id
/// is not a number.
pub(crate) fn token_owner(claims: &ActionsClaims) -> Result<(String, Option<u64>), String> {
    let from_repo = claims.repository.split_once('/').map(|(o, _)| o.trim());
    let login = match (claims.repository_owner.as_deref().map(str::trim), from_repo) {
        (Some(o), Some(r)) if !o.eq_ignore_ascii_case(r) => {
            return Err(format!(
                "the OIDC token's repository_owner {o:?} does not own its repository {:?}",
                claims.repository
            ))
        }
        (Some(o), _) if !o.is_empty() => o.to_string(),
        (_, Some(r)) => r.to_string(),
        _ => return Err("the OIDC token names no repository owner".to_string()),
    };
    let id =
        match claims.repository_owner_id.as_deref().map(str::trim) {
            None => None,
            Some(s) => Some(s.parse::<u64>().map_err(|_| {
                format!("the OIDC token's repository_owner_id {s:?} is not a number")
            })?),
        };
    Ok((login, id))
}

/// Whether the token's repository owner may post manifests: one of the
/// App's installations is on it, or `allowed` names it. An id on both sides
/// decides alone (a renamed owner keeps its id; a new owner of an old login
/// does not get it); a login is compared case-insensitively otherwise.
/// With no installation known and nothing allowed, every token is refused.
pub(crate) fn authorize_owner(
    claims: &ActionsClaims,
    allowed: &[String],
    installed: &[KnownAccount],
) -> Result<OwnerGrant, String> {
    let (login, id) = token_owner(claims)?;
    if allowed.is_empty() && installed.is_empty() {
        return Err(
            "OIDC tokens are refused: this App knows no installation (none was delivered) \
             and OIDC_ALLOWED_OWNERS is empty"
                .to_string(),
        );
    }
    let same_login = |other: &str| other.eq_ignore_ascii_case(&login);
    let account_matches = |a: &KnownAccount| match (a.id, id) {
        (Some(a), Some(t)) => a == t,
        _ => a.login.as_deref().is_some_and(same_login),
    };
    if installed.iter().any(account_matches) {
        return Ok(OwnerGrant::Installation);
    }
    let listed = |entry: &String| match entry.parse::<u64>() {
        Ok(n) => id == Some(n),
        Err(_) => same_login(entry),
    };
    if allowed.iter().any(listed) {
        return Ok(OwnerGrant::AllowList);
    }
    let shown_id = id.map_or("no id".to_string(), |i| format!("id {i}"));
    Err(format!(
        "the OIDC token is from {login:?} ({shown_id}), which has no installation of this App \
         and is not in OIDC_ALLOWED_OWNERS; nothing was stored"
    ))
}

/// Whether a bearer token has the shape of a JWT (three dot-separated parts).
pub(crate) fn looks_like_jwt(token: &str) -> bool {
    token.split('.').count() == 3 && !token.contains(char::is_whitespace)
}

/// The cached key set.
struct KeyCache {
    keys: JwkSet,
    /// When the cached set was fetched.
    fetched_at: Option<Instant>,
    /// When we last tried to fetch, successful or not.
    attempted_at: Option<Instant>,
}

impl Default for KeyCache {
    fn default() -> KeyCache {
        KeyCache {
            keys: JwkSet { keys: Vec::new() },
            fetched_at: None,
            attempted_at: None,
        }
    }
}

/// Verifies GitHub Actions OIDC tokens against one issuer and audience.
pub struct OidcVerifier {
    config: OidcConfig,
    http: reqwest::Client,
    cache: tokio::sync::Mutex<KeyCache>,
    fetches: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for OidcVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcVerifier")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl OidcVerifier {
    pub fn new(config: OidcConfig) -> OidcVerifier {
        install_crypto_provider();
        OidcVerifier {
            config,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()
                .expect("a reqwest client builds"),
            cache: tokio::sync::Mutex::new(KeyCache::default()),
            fetches: std::sync::atomic::AtomicU64::new(0),
        }
    }

    pub(crate) fn config(&self) -> &OidcConfig {
        &self.config
    }

    /// How many times the key set was fetched (for tests and diagnostics).
    pub fn jwks_fetches(&self) -> u64 {
        self.fetches.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Verify a token: its header (RS256, a `kid`), the key for that `kid`
    /// from the issuer's key set, then signature and claims
    /// ([`decode_claims`]).
    pub async fn verify(&self, token: &str) -> Result<ActionsClaims, OidcError> {
        let header =
            jsonwebtoken::decode_header(token).map_err(|e| invalid(format!("not a JWT: {e}")))?;
        // Refused before any key lookup, so a forged header costs no fetch.
        if header.alg != Algorithm::RS256 {
            return Err(invalid(format!(
                "OIDC token algorithm {:?} is not RS256",
                header.alg
            )));
        }
        let kid = header
            .kid
            .ok_or_else(|| invalid("OIDC token header has no kid"))?;
        let key = self.key_for(&kid).await?;
        decode_claims(token, &key, &self.config)
    }

    /// The key for `kid`, fetching the key set when it is stale, or when the
    /// `kid` is unknown and the last fetch is older than `min_refetch`.
    async fn key_for(&self, kid: &str) -> Result<DecodingKey, OidcError> {
        let mut cache = self.cache.lock().await;
        let stale = cache
            .fetched_at
            .is_none_or(|t| t.elapsed() >= self.config.jwks_ttl);
        let may_fetch = cache
            .attempted_at
            .is_none_or(|t| t.elapsed() >= self.config.min_refetch);
        let unknown = cache.keys.find(kid).is_none();
        if (stale || unknown) && may_fetch {
            cache.attempted_at = Some(Instant::now());
            match self.fetch_keys().await {
                Ok(keys) => {
                    cache.keys = keys;
                    cache.fetched_at = Some(Instant::now());
                }
                // A stale set still verifies tokens signed with its keys.
                Err(e) if cache.keys.keys.is_empty() => return Err(e),
                Err(e) => tracing::warn!("keeping the cached OIDC key set: {e}"),
            }
        } else if cache.keys.keys.is_empty() {
            return Err(OidcError::Unavailable(format!(
                "the OIDC key set from {} could not be fetched; retry later",
                self.config.jwks_url()
            )));
        }
        let jwk = cache.keys.find(kid).ok_or_else(|| {
            invalid(format!(
                "OIDC token key id {kid:?} is not in the issuer's key set"
            ))
        })?;
        // parse_jwks kept only keys that convert.
        DecodingKey::from_jwk(jwk).map_err(|e| invalid(format!("OIDC key {kid:?}: {e}")))
    }

    async fn fetch_keys(&self) -> Result<JwkSet, OidcError> {
        self.fetches
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let url = self.config.jwks_url();
        let unavailable = |e: String| {
            OidcError::Unavailable(format!("could not fetch the OIDC key set from {url}: {e}"))
        };
        let resp = self
            .http
            .get(&url)
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|e| unavailable(e.to_string()))?;
        if !resp.status().is_success() {
            return Err(unavailable(format!("HTTP {}", resp.status())));
        }
        let set: Value = resp.json().await.map_err(|e| unavailable(e.to_string()))?;
        let keys = parse_jwks(&set);
        if keys.keys.is_empty() {
            return Err(unavailable("it holds no RSA key with a kid".to_string()));
        }
        Ok(keys)
    }
}

/// The usable keys of a JWKS document: RSA keys with a `kid` that make a
/// decoding key. Keys of other types, or that do not parse, are skipped
/// rather than spoiling the set (a strict `JwkSet` parse would fail whole).
pub(crate) fn parse_jwks(set: &Value) -> JwkSet {
    let items = set.get("keys").and_then(Value::as_array);
    let keys = items
        .into_iter()
        .flatten()
        .filter_map(|item| serde_json::from_value::<Jwk>(item.clone()).ok())
        .filter(|jwk| matches!(jwk.algorithm, AlgorithmParameters::RSA(_)))
        .filter(|jwk| jwk.common.key_id.is_some() && DecodingKey::from_jwk(jwk).is_ok())
        .collect();
    JwkSet { keys }
}

/// jsonwebtoken picks its crypto backend from its features and panics when it
/// cannot tell; another dependency enabling `aws_lc_rs` would make it unable
/// to, so name ours explicitly (a no-op when one is installed already).
pub fn install_crypto_provider() {
    let _ = jsonwebtoken::crypto::CryptoProvider::install_default(
        &jsonwebtoken::crypto::rust_crypto::DEFAULT_PROVIDER,
    );
}

/// Inside a GitHub Actions job with `permissions: id-token: write`: ask the
/// runtime for an OIDC token for `audience` (`GET $ACTIONS_ID_TOKEN_REQUEST_URL
/// &audience=…` with `Authorization: bearer $ACTIONS_ID_TOKEN_REQUEST_TOKEN`,
/// answer `{"value": JWT}`).
pub(crate) async fn request_actions_token(
    request_url: &str,
    request_token: &str,
    audience: &str,
) -> anyhow::Result<String> {
    use anyhow::Context;
    let mut url = reqwest::Url::parse(request_url)
        .with_context(|| format!("ACTIONS_ID_TOKEN_REQUEST_URL {request_url:?} is not a URL"))?;
    url.query_pairs_mut().append_pair("audience", audience);
    let resp = reqwest::Client::new()
        .get(url)
        .header("authorization", format!("bearer {request_token}"))
        .header("accept", "application/json")
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .context("requesting an OIDC token from the Actions runtime")?;
    let status = resp.status();
    let text = resp.text().await.unwrap_or_default();
    if !status.is_success() {
        anyhow::bail!(
            "the Actions runtime refused an OIDC token ({status}): {text} \
             (does the job have `permissions: id-token: write`?)"
        );
    }
    #[derive(Deserialize)]
    struct TokenAnswer {
        value: String,
    }
    let answer: TokenAnswer = serde_json::from_str(&text)
        .with_context(|| format!("the Actions runtime answered without a token: {text}"))?;
    Ok(answer.value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const L: i64 = LEEWAY_SECS as i64;

    fn config() -> OidcConfig {
        OidcConfig::new(GITHUB_ACTIONS_ISSUER, "safe-outcomes")
    }

    fn now() -> i64 {
        chrono::Utc::now().timestamp()
    }

    fn claims() -> ActionsClaims {
        let now = now();
        ActionsClaims {
            iss: GITHUB_ACTIONS_ISSUER.into(),
            aud: json!("safe-outcomes"),
            sub: "repo:octo/app:ref:refs/heads/main".into(),
            exp: Some(now + 300),
            nbf: Some(now - 10),
            iat: Some(now - 10),
            repository: "octo/app".into(),
            run_id: Some("42".into()),
            ..ActionsClaims::default()
        }
    }

    /// The fixture test key: signs a token, and its public half checks one.
    fn keys() -> (jsonwebtoken::EncodingKey, DecodingKey) {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/oidc/test-key.pem");
        let pem = std::fs::read(path).unwrap();
        let signing = jsonwebtoken::EncodingKey::from_rsa_pem(&pem).unwrap();
        let public = Jwk::from_encoding_key(&signing, Algorithm::RS256).unwrap();
        (signing, DecodingKey::from_jwk(&public).unwrap())
    }

    /// Sign `c` (its absent claims left out, as GitHub does) with the test
    /// key and check it as the verifier does.
    fn check(c: &ActionsClaims) -> Result<ActionsClaims, OidcError> {
        let (signing, public) = keys();
        let header = jsonwebtoken::Header::new(Algorithm::RS256);
        let mut body = serde_json::to_value(c).unwrap();
        body.as_object_mut().unwrap().retain(|_, v| !v.is_null());
        let token = jsonwebtoken::encode(&header, &body, &signing).unwrap();
        decode_claims(&token, &public, &config())
    }

    fn passes(c: &ActionsClaims) -> bool {
        check(c).as_ref() == Ok(c)
    }

    fn refused(c: &ActionsClaims) -> String {
        match check(c) {
            Err(OidcError::Invalid(d)) => d,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn a_fresh_token_for_our_audience_passes() {
        assert!(passes(&claims()));
        assert_eq!(claims().run_id_number(), Some(42));
    }

    #[test]
    fn another_key_is_refused() {
        let other = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/oidc/other-key.pem");
        let other = jsonwebtoken::EncodingKey::from_rsa_pem(&std::fs::read(other).unwrap());
        let header = jsonwebtoken::Header::new(Algorithm::RS256);
        let token = jsonwebtoken::encode(&header, &claims(), &other.unwrap()).unwrap();
        let refusal = decode_claims(&token, &keys().1, &config()).unwrap_err();
        assert!(refusal.to_string().contains("signature"), "{refusal}");
    }

    #[test]
    fn issuer_must_match_with_or_without_a_trailing_slash() {
        let mut c = claims();
        c.iss = format!("{GITHUB_ACTIONS_ISSUER}/");
        assert!(passes(&c));
        c.iss = "https://evil.example".into();
        assert!(refused(&c).contains("issuer"));
        c.iss = String::new();
        assert!(refused(&c).contains("issuer"));
    }

    #[test]
    fn audience_may_be_a_list_but_must_hold_ours() {
        let mut c = claims();
        c.aud = json!(["other", "safe-outcomes"]);
        assert!(passes(&c));
        c.aud = json!("https://github.com/octo");
        assert!(refused(&c).contains("audience"));
        c.aud = json!(["other"]);
        assert!(refused(&c).contains("audience"));
        c.aud = Value::Null;
        assert!(refused(&c).contains("audience"));
    }

    #[test]
    fn claims_at_the_ends_of_i64_are_judged_without_overflow() {
        let mut c = claims();
        c.exp = Some(i64::MIN);
        assert!(refused(&c).contains("exp"));
        c.exp = Some(i64::MAX);
        assert!(passes(&c));
        c.nbf = Some(i64::MAX);
        assert!(refused(&c).contains("not valid before"));
        c.nbf = None;
        c.iat = Some(i64::MAX);
        let refusal = refused(&c);
        assert!(refusal.contains("future"), "{refusal}");
        // A clock at the end of i64 too.
        assert!(check_actions_claims(&claims(), i64::MAX).is_ok());
        let mut c = claims();
        c.iat = Some(i64::MAX);
        assert!(check_actions_claims(&c, i64::MAX).is_ok());
        assert!(check_actions_claims(&c, i64::MAX - L - 1).is_err());
    }

    #[test]
    fn expiry_is_required_and_allows_the_leeway() {
        // A few seconds' margin: the library reads the wall clock itself.
        let mut c = claims();
        c.exp = Some(now() - L + 5);
        assert!(passes(&c));
        c.exp = Some(now() - L - 2);
        assert!(refused(&c).contains("expired"));
        c.exp = None;
        assert!(refused(&c).contains("exp"));
    }

    #[test]
    fn not_before_and_issued_at_in_the_future_are_refused() {
        let mut c = claims();
        c.nbf = Some(now() + L + 5);
        assert!(refused(&c).contains("not valid before"));
        let mut c = claims();
        c.iat = Some(now() + L + 5);
        assert!(refused(&c).contains("issued in the future"));
        let mut c = claims();
        c.nbf = Some(now() + L - 2);
        c.iat = Some(now() + L - 2);
        assert!(passes(&c));
        // The iat check on its own, at the exact edge.
        let mut c = claims();
        c.iat = Some(1_000 + L);
        assert!(check_actions_claims(&c, 1_000).is_ok());
        c.iat = Some(1_000 + L + 1);
        assert!(check_actions_claims(&c, 1_000).is_err());
    }

    #[test]
    fn a_token_without_a_repository_is_refused() {
        let mut c = claims();
        c.repository = " ".into();
        assert!(refused(&c).contains("repository"));
    }

    fn owned(login: &str, id: Option<&str>) -> ActionsClaims {
        ActionsClaims {
            repository: format!("{login}/app"),
            repository_owner: Some(login.into()),
            repository_owner_id: id.map(str::to_string),
            ..claims()
        }
    }

    fn account(login: &str, id: Option<u64>) -> KnownAccount {
        KnownAccount {
            login: Some(login.into()),
            id,
        }
    }

    #[test]
    fn only_installed_or_allowed_owners_pass() {
        let installed = [account("octo", Some(65))];
        let ok = authorize_owner(&owned("octo", Some("65")), &[], &installed);
        assert_eq!(ok, Ok(OwnerGrant::Installation));
        let stranger = authorize_owner(&owned("evil", Some("666")), &[], &installed);
        assert!(stranger.unwrap_err().contains("\"evil\" (id 666)"));
        // Renamed: same id, new login.
        let renamed = authorize_owner(&owned("octo-renamed", Some("65")), &[], &installed);
        assert_eq!(renamed, Ok(OwnerGrant::Installation));
        // The old login taken by someone else: the id decides.
        assert!(authorize_owner(&owned("octo", Some("999")), &[], &installed).is_err());
        // An installation filed without an id matches by login, any case.
        let by_login = [account("Octo", None)];
        assert!(authorize_owner(&owned("octo", Some("1")), &[], &by_login).is_ok());
    }

    #[test]
    fn the_allow_list_takes_logins_and_ids() {
        let allowed = vec!["partner".to_string(), "4242".to_string()];
        let by_login = authorize_owner(&owned("Partner", Some("1")), &allowed, &[]);
        assert_eq!(by_login, Ok(OwnerGrant::AllowList));
        let by_id = authorize_owner(&owned("someone", Some("4242")), &allowed, &[]);
        assert_eq!(by_id, Ok(OwnerGrant::AllowList));
        assert!(authorize_owner(&owned("someone", Some("4243")), &allowed, &[]).is_err());
        let cfg = OidcConfig::new("https://i", "a").with_allowed_owners(&[" x ", "", "7"]);
        assert_eq!(cfg.allowed_owners, vec!["x", "7"]);
    }

    #[test]
    fn with_nothing_known_every_token_is_refused() {
        let e = authorize_owner(&owned("octo", Some("65")), &[], &[]).unwrap_err();
        assert!(e.contains("OIDC_ALLOWED_OWNERS is empty"), "{e}");
    }

    #[test]
    fn the_owner_claims_must_agree_and_the_id_be_a_number() {
        let installed = [account("octo", None)];
        let mut c = owned("octo", None);
        c.repository = "evil/app".into();
        assert!(authorize_owner(&c, &[], &installed)
            .unwrap_err()
            .contains("does not own"));
        let c = owned("octo", Some("sixty-five"));
        assert!(authorize_owner(&c, &[], &installed)
            .unwrap_err()
            .contains("not a number"));
        // No repository_owner claim: the repository's owner part is used.
        let mut c = owned("octo", None);
        c.repository_owner = None;
        assert!(authorize_owner(&c, &[], &installed).is_ok());
    }

    #[test]
    fn github_claims_parse_with_numbers_as_strings() {
        let c: ActionsClaims = serde_json::from_value(json!({
            "jti": "x", "sub": "repo:octo/app:ref:refs/heads/main",
            "aud": "safe-outcomes", "ref": "refs/heads/main", "sha": "abc",
            "repository": "octo/app", "repository_owner": "octo",
            "repository_id": "74", "run_id": "5", "run_attempt": "1",
            "actor": "monalisa", "workflow": "CI", "event_name": "push",
            "iss": GITHUB_ACTIONS_ISSUER, "nbf": 1, "exp": 2, "iat": 1,
            "something_new": {"a": 1}
        }))
        .unwrap();
        assert_eq!(c.git_ref.as_deref(), Some("refs/heads/main"));
        assert_eq!(c.run_id_number(), Some(5));
        assert_eq!(c.workflow.as_deref(), Some("CI"));
    }

    #[test]
    fn jwt_shape() {
        assert!(looks_like_jwt("a.b.c"));
        assert!(!looks_like_jwt("test-api-token"));
        assert!(!looks_like_jwt("a.b"));
        assert!(!looks_like_jwt("a.b.c.d"));
    }

    #[test]
    fn jwks_keeps_only_rsa_keys_with_a_kid() {
        let set = json!({"keys": [
            {"kty": "RSA", "kid": "k1", "alg": "RS256", "use": "sig", "n": "sXch", "e": "AQAB"},
            {"kty": "RSA", "n": "sXch", "e": "AQAB"},
            {"kty": "EC", "kid": "k2", "crv": "P-256", "x": "AA", "y": "AA"},
            {"kty": "nonsense", "kid": "k3"}
        ]});
        let kids = |set: JwkSet| -> Vec<Option<String>> {
            set.keys.into_iter().map(|k| k.common.key_id).collect()
        };
        assert_eq!(kids(parse_jwks(&set)), vec![Some("k1".to_string())]);
        assert!(kids(parse_jwks(&json!({"no": "keys"}))).is_empty());
    }

    #[test]
    fn issuer_config_drops_a_trailing_slash() {
        let c = OidcConfig::new("https://ghes.example/_services/token/", "a");
        assert_eq!(
            c.jwks_url(),
            "https://ghes.example/_services/token/.well-known/jwks"
        );
    }
}
