//! Webhook bodies that several test modules deliver the same way.

use crate::common::user;
use serde_json::{json, Value};

/// `installation.created`: installation `id` on the account acme, holding
/// `repo`, installed by alice.
pub fn installation_created(id: u64, repo: &str) -> Value {
    json!({"action": "created", "installation": {"id": id, "account": {"login": "acme"}},
           "repositories": [{"full_name": repo}], "sender": user("alice")})
}
