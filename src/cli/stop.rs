//! The signals that stop a serving command (SIGINT, SIGTERM), registered
//! *before* the server listens: a supervisor (or a test) that sees the server
//! answer and sends SIGTERM at once must get a clean stop, never the default
//! action that kills the process mid-write.

/// The stop signals, registered at construction.
pub(crate) struct StopSignals {
    #[cfg(unix)]
    handlers: Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>,
}

impl StopSignals {
    /// Register the handlers now (inside a tokio runtime). If the platform
    /// refuses, `wait` falls back to Ctrl-C alone.
    pub fn install() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let handlers = signal(SignalKind::interrupt())
                .and_then(|int| Ok((int, signal(SignalKind::terminate())?)))
                .ok();
            Self { handlers }
        }
        #[cfg(not(unix))]
        Self {}
    }

    /// Wait for the first stop signal.
    pub async fn wait(self) {
        #[cfg(unix)]
        if let Some((mut int, mut term)) = self.handlers {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
            return;
        }
        let _ = tokio::signal::ctrl_c().await;
    }
}
