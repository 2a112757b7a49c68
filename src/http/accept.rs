//! The accept loop behind `RunningServer`: hyper's HTTP/1 connections with a
//! header timeout that also closes idle keep-alive connections, and a cap on
//! open connections. At the cap the loop stops accepting until one closes, so
//! extra clients wait in the kernel's listen backlog instead of taking memory
//! or file descriptors; a failed `accept` (e.g. out of descriptors) pauses
//! the loop, it never ends it. Each request carries its peer's address
//! (`ConnectInfo<SocketAddr>`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{oneshot, Semaphore};

use super::Limits;

/// Pause after a failed `accept` before trying again.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// A connection's service that tells each request the peer's address (as
/// axum's `ConnectInfo`, what the sign-in rate limit counts by).
struct WithPeer<S> {
    inner: S,
    peer: SocketAddr,
}

impl<S, B> hyper::service::Service<hyper::Request<B>> for WithPeer<S>
where
    S: hyper::service::Service<hyper::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn call(&self, mut req: hyper::Request<B>) -> Self::Future {
        req.extensions_mut().insert(ConnectInfo(self.peer));
        self.inner.call(req)
    }
}

/// Serve until `stop` fires; then finish the open connections (bounded by
/// the header and body timeouts) and return.
pub(super) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    mut stop: oneshot::Receiver<()>,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => slot.expect("the slots are never closed"),
            _ = &mut stop => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed; pausing");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
            _ = &mut stop => break,
        };
        let _ = stream.set_nodelay(true);
        let service = WithPeer {
            inner: TowerToHyperService::new(router.clone()),
            peer,
        };
        let connection = graceful.watch(builder.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            drop(slot);
        });
    }
    drop(listener);
    let grace = limits.header_timeout + limits.body_timeout;
    if tokio::time::timeout(grace, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after {grace:?}; stopping anyway");
    }
    Ok(())
}
