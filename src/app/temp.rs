//! The process's temporary folders (the demo's store, the bench's stores):
//! removed on every exit path — a normal return, an error (the folder's
//! guard drops), and Ctrl-C or SIGTERM (a handler removes every folder still
//! registered, then exits with 130 or 143) — unless the user asked to keep
//! them (`TempFolder::keep`).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};

/// Folders to remove if a signal ends the process.
static REGISTERED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A folder under the system temp folder, removed when dropped.
#[derive(Debug)]
pub(crate) struct TempFolder {
    path: PathBuf,
    keep: bool,
}

impl TempFolder {
    /// A new, empty folder `PREFIX…` under the system temp folder.
    pub fn new(prefix: &str) -> std::io::Result<TempFolder> {
        let path = tempfile::Builder::new().prefix(prefix).tempdir()?.keep();
        REGISTERED
            .lock()
            .expect("temp folders lock")
            .push(path.clone());
        remove_on_signal();
        Ok(TempFolder { path, keep: false })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Keep the folder after the process ends (the user asked for it).
    pub fn keep(mut self) -> PathBuf {
        self.keep = true;
        forget(&self.path);
        self.path.clone()
    }
}

impl Drop for TempFolder {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.path);
            forget(&self.path);
        }
    }
}

fn forget(path: &Path) {
    REGISTERED
        .lock()
        .expect("temp folders lock")
        .retain(|p| p != path);
}

/// Remove every registered folder (the signal path).
pub(crate) fn remove_registered() {
    let folders = std::mem::take(&mut *REGISTERED.lock().expect("temp folders lock"));
    for path in folders {
        let _ = std::fs::remove_dir_all(path);
    }
}

/// Once per process, inside a tokio runtime: on SIGINT or SIGTERM remove the
/// registered folders and exit as the signal would have (130, 143).
fn remove_on_signal() {
    static INSTALLED: Once = Once::new();
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    INSTALLED.call_once(|| {
        runtime.spawn(async {
            let code = signalled().await;
            remove_registered();
            std::process::exit(code);
        });
    });
}

/// Wait for SIGINT (130) or SIGTERM (143).
async fn signalled() -> i32 {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let Ok(mut term) = signal(SignalKind::terminate()) else {
            let _ = tokio::signal::ctrl_c().await;
            return 130;
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => 130,
            _ = term.recv() => 143,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        130
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The signal path removes every registered folder: one test at a time.
    static SERIAL: Mutex<()> = Mutex::new(());

    #[test]
    fn a_folder_goes_when_dropped_and_stays_when_kept() {
        let _serial = SERIAL.lock().unwrap();
        let gone = TempFolder::new("so-temp-test-").unwrap();
        let path = gone.path().to_path_buf();
        std::fs::write(path.join("f"), "x").unwrap();
        drop(gone);
        assert!(!path.exists());
        let kept = TempFolder::new("so-temp-test-").unwrap().keep();
        assert!(kept.exists());
        assert!(!REGISTERED.lock().unwrap().contains(&kept));
        std::fs::remove_dir_all(kept).unwrap();
    }

    #[test]
    fn the_signal_path_removes_what_is_registered() {
        let _serial = SERIAL.lock().unwrap();
        let folder = TempFolder::new("so-temp-test-").unwrap();
        let path = folder.path().to_path_buf();
        std::mem::forget(folder);
        remove_registered();
        assert!(!path.exists());
    }
}
