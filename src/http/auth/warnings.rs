//! What an operator should fix before anyone can use the server from
//! outside, said at start-up (`serve` logs each line) and on the setup and
//! sign-in pages: a `PUBLIC_URL` that is missing or local (GitHub would send
//! webhooks to, and check runs would link to, an address nobody else can
//! reach), and a missing `API_TOKEN` (no operator sign-in, no bearer reads).

/// The warnings for a server whose `PUBLIC_URL` setting is `public_url`
/// (`None`: unset) and that has (`api_token`) an `API_TOKEN` or not.
pub(crate) fn startup(
    public_url: Option<&str>,
    effective_url: &str,
    api_token: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    match public_url.map(str::trim).filter(|u| !u.is_empty()) {
        None => out.push(format!(
            "PUBLIC_URL is not set: the webhook URL a registered App gets and the links in check \
             runs point at {effective_url}, which GitHub and your users cannot reach; set \
             PUBLIC_URL to the address this server is reached at"
        )),
        Some(url) if is_local(url) => out.push(format!(
            "PUBLIC_URL {url} is a local address: GitHub cannot deliver webhooks to it and check-run \
             links will not open for anyone else; set PUBLIC_URL to the address this server is \
             reached at"
        )),
        Some(_) => {}
    }
    if !api_token {
        out.push(
            "API_TOKEN is not set: nobody can sign in as the operator on /auth/login or read the \
             API with a bearer token, and the dashboard opens only with sign-in with GitHub"
                .to_string(),
        );
    }
    out
}

/// True for a URL whose host only this machine (or nobody) reaches.
pub(crate) fn is_local(url: &str) -> bool {
    let Some(host) = reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
    else {
        return true;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback() || ip.is_unspecified(),
        Err(_) => {
            let name = host.trim_end_matches('.');
            name == "localhost" || name.ends_with(".localhost")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_or_local_addresses_and_a_missing_token_are_said() {
        let said = startup(None, "http://127.0.0.1:3000", false);
        assert_eq!(said.len(), 2);
        assert!(said[0].contains("PUBLIC_URL is not set") && said[0].contains("127.0.0.1:3000"));
        assert!(said[1].contains("API_TOKEN"));
        for local in [
            "http://localhost:3000",
            "http://127.0.0.1",
            "http://[::1]:8080",
            "http://0.0.0.0:3000",
            "http://app.localhost",
            "not a url",
        ] {
            let said = startup(Some(local), local, true);
            assert_eq!(said.len(), 1, "{local}");
            assert!(said[0].contains("local address"), "{local}");
        }
        assert!(startup(Some("https://outcomes.example"), "", true).is_empty());
        assert!(startup(Some("http://10.0.0.5:3000"), "", true).is_empty());
    }
}
