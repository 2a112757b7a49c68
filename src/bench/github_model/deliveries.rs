//! App webhook deliveries (JWT auth): `GET /app/hook/deliveries` (newest
//! first, `per_page` and an opaque `cursor`, with a `Link: rel="next"` like
//! GitHub's) and `POST /app/hook/deliveries/{id}/attempts` (recorded, 202).

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{base_url, error, link_next, require_jwt, AppJwt, Fake, FakeGitHub};

pub const LIST_DELIVERIES: &str = "GET /app/hook/deliveries";
pub const REDELIVER: &str = "POST /app/hook/deliveries/{id}/attempts";

/// One delivery as GitHub lists it.
#[derive(Debug, Clone)]
pub struct Delivery {
    pub id: u64,
    pub guid: String,
    pub status_code: u16,
    pub delivered_at: chrono::DateTime<chrono::Utc>,
    pub redelivery: bool,
    pub event: String,
}

impl Delivery {
    fn json(&self) -> Value {
        let status = match self.status_code {
            0 => "Timed out".to_string(),
            200..=299 => "OK".to_string(),
            c => format!("Invalid HTTP Response: {c}"),
        };
        json!({
            "id": self.id, "guid": self.guid,
            "delivered_at": self.delivered_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            "redelivery": self.redelivery, "duration": 0.31, "status": status,
            "status_code": self.status_code, "event": self.event, "action": "opened",
            "installation_id": 555, "repository_id": 99, "throttled_at": null
        })
    }
}

/// The deliveries the fake reports, and the redeliveries asked of it.
#[derive(Debug, Default)]
pub struct Deliveries {
    pub list: Vec<Delivery>,
    pub redelivery_requests: Vec<u64>,
}

impl FakeGitHub {
    pub fn add_delivery(&self, delivery: Delivery) {
        self.fake.lock().deliveries.list.push(delivery);
    }

    /// Delivery ids a redelivery was requested for, in order.
    pub fn redelivery_requests(&self) -> Vec<u64> {
        self.fake.lock().deliveries.redelivery_requests.clone()
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ListQuery {
    per_page: Option<usize>,
    cursor: Option<String>,
}

pub async fn list(
    State(fake): State<Fake>,
    Query(q): Query<ListQuery>,
    headers: HeaderMap,
) -> Response {
    if let Err(r) = require_jwt(&fake, &headers) {
        return r;
    }
    let per_page = q.per_page.unwrap_or(30).clamp(1, 100);
    let offset = match q
        .cursor
        .as_deref()
        .map(|c| c.strip_prefix("v1_").map(str::parse))
    {
        None => 0,
        Some(Some(Ok(n))) => n,
        Some(_) => return error(StatusCode::UNPROCESSABLE_ENTITY, "bad cursor"),
    };
    let mut all = fake.lock().deliveries.list.clone();
    all.sort_by_key(|d| std::cmp::Reverse(d.id));
    let page: Vec<Value> = all
        .iter()
        .skip(offset)
        .take(per_page)
        .map(Delivery::json)
        .collect();
    let mut response = Json(page).into_response();
    if offset + per_page < all.len() {
        let next = format!(
            "{}/app/hook/deliveries?per_page={per_page}&cursor=v1_{}",
            base_url(&headers),
            offset + per_page
        );
        link_next(&mut response, &next);
    }
    response
}

pub(crate) async fn redeliver(
    State(fake): State<Fake>,
    Path(id): Path<u64>,
    _jwt: AppJwt,
) -> Response {
    let mut inner = fake.lock();
    if !inner.deliveries.list.iter().any(|d| d.id == id) {
        return error(StatusCode::NOT_FOUND, "Not Found");
    }
    inner.deliveries.redelivery_requests.push(id);
    (StatusCode::ACCEPTED, Json(json!({}))).into_response()
}
