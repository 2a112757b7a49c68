//! Checking the App's credentials at start-up: `GET /app` signed with the App
//! JWT. The answer lands in the App's health (`ApiCalls`), which `/status`
//! shows, so wrong credentials are visible at once instead of looking
//! healthy until the first check run fails. While GitHub refuses (or cannot
//! be reached), the check is repeated with a growing pause.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::client::{Endpoint, GitHubClient};
use super::error::{FailureClass, GitHubError};

pub(crate) const GET_APP: Endpoint = Endpoint::idempotent("app.get");

/// First and longest pause between checks while they fail.
const FIRST_PAUSE: Duration = Duration::from_secs(30);
const LONGEST_PAUSE: Duration = Duration::from_secs(600);

/// `GET /app` once: the App's slug on success.
pub async fn check_credentials(client: &GitHubClient) -> Result<String, GitHubError> {
    let app: Value = client
        .call_app(GET_APP, |crab| async move {
            crab.get::<Value, _, _>("/app", None::<&()>).await
        })
        .await?;
    Ok(app["slug"].as_str().unwrap_or_default().to_string())
}

/// Check until GitHub accepts the credentials once, then stop.
pub(crate) fn spawn(client: Arc<GitHubClient>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut pause = FIRST_PAUSE;
        loop {
            match check_credentials(&client).await {
                Ok(slug) => {
                    tracing::info!(app = %slug, "GitHub accepted the App's credentials (GET /app)");
                    return;
                }
                // The client has logged the failure once, by its class; this
                // line only says what the check concluded and when it runs again.
                Err(e) => match e.class() {
                    FailureClass::CredentialsRefused => tracing::error!(
                        "GitHub did not accept the App's credentials (GET /app); check APP_ID and PRIVATE_KEY; checking again in {} s",
                        pause.as_secs()
                    ),
                    class => tracing::warn!(
                        "the App's credentials are not checked yet ({}); checking again in {} s",
                        class.summary().to_lowercase(),
                        pause.as_secs()
                    ),
                },
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(LONGEST_PAUSE);
        }
    })
}
