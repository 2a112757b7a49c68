//! `GET /api/v1/export?format=jsonl|csv|opentraces` (and its older name
//! `/api/v1/export.jsonl`): the export, streamed as it is read from the store,
//! with the read filters of every read endpoint. A browser saves it under a
//! file name (`Content-Disposition`), so the dashboard's export links
//! download it with the signed-in session.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::State as StateExtractor;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use http_body::Frame;
use tokio::sync::mpsc;

use crate::http::budget::ReadPermit;
use crate::http::read::{QueryPairs, ReadFilter, Reader};
use crate::http::{ApiError, Mount, State};
use crate::read::export::{write_lines, Format};

/// The response's `Content-Disposition`: a download named for the format.
fn disposition(format: Format) -> String {
    format!("attachment; filename=\"{}\"", format.file_name())
}

/// `GET /api/v1/export`, and its older name `/api/v1/export.jsonl`.
pub fn routes(_: &Mount) -> Router<State> {
    Router::new()
        .route("/api/v1/export", get(export))
        .route("/api/v1/export.jsonl", get(export))
}

/// Chunks in flight between the store reader and the connection.
const CHANNEL_CHUNKS: usize = 4;
/// Lines are gathered into chunks of about this size.
const CHUNK_BYTES: usize = 64 * 1024;

type Chunk = Result<Bytes, std::io::Error>;

/// A response body fed by a channel: the blocking store reader sends
/// chunks, the connection takes them as it can (backpressure through the
/// bounded channel). An error ends the response abruptly, so a reader never
/// mistakes a cut export for a whole one.
struct ChannelBody(mpsc::Receiver<Chunk>);

impl http_body::Body for ChannelBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        self.0
            .poll_recv(cx)
            .map(|chunk| chunk.map(|c| c.map(Frame::data)))
    }
}

pub async fn export(
    StateExtractor(state): StateExtractor<State>,
    reader: Reader,
    place: ReadPermit,
    QueryPairs(pairs): QueryPairs,
) -> Result<Response, ApiError> {
    let (filter, rest) = ReadFilter::parse(&pairs, &["format"])?;
    let format = match rest.get("format").map(String::as_str) {
        None => Format::Jsonl,
        Some(f) => Format::parse(f).ok_or_else(|| {
            ApiError::bad_request(format!(
                "format {f:?} is not one of {}",
                Format::NAMES.join(", ")
            ))
        })?,
    };
    let (tx, rx) = mpsc::channel::<Chunk>(CHANNEL_CHUNKS);
    let store = state.store.clone();
    tokio::task::spawn_blocking(move || {
        // The read's place is held until the last line is sent.
        let _place = place;
        let mut chunk = Vec::with_capacity(CHUNK_BYTES);
        let result = write_lines(&store, &filter, &reader.scope, format, |line| {
            chunk.extend_from_slice(&line);
            if chunk.len() < CHUNK_BYTES {
                return true;
            }
            let full = std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK_BYTES));
            tx.blocking_send(Ok(full.into())).is_ok()
        });
        let last = match result {
            Ok(_) => Ok(Bytes::from(chunk)),
            Err(e) => {
                tracing::error!(error = %e, "export stopped: the store failed");
                Err(std::io::Error::other(e.to_string()))
            }
        };
        let _ = tx.blocking_send(last);
    });
    Ok((
        [
            (header::CONTENT_TYPE, format.content_type().to_string()),
            (header::CONTENT_DISPOSITION, disposition(format)),
        ],
        Body::new(ChannelBody(rx)),
    )
        .into_response())
}
