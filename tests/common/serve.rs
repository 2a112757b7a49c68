//! `safe-outcomes serve` as a child process on a loopback port it picks itself
//! (`PORT=0`; it prints `listening on URL` on stdout), with its stdout and
//! stderr captured, for the crash and log tests.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

pub struct ServeChild {
    pub child: Child,
    /// Kills the process if the test process ends without dropping us.
    _reaper: super::guard::Reaper,
    pub url: String,
    /// Everything the process wrote so far, stdout and stderr interleaved.
    pub output: Arc<Mutex<String>>,
}

impl ServeChild {
    /// Start `serve` on `data_dir` with the given extra environment.
    pub async fn start(data_dir: &Path, env: &[(&str, &str)]) -> ServeChild {
        Self::start_in(None, data_dir, env).await
    }

    /// `start` on `dir/data` with the extra environment `env`, the setup
    /// page (without App credentials) writing to `ENV_FILE` `dir/app.env`;
    /// the server and that file's path.
    pub async fn start_with_env_file(dir: &Path, env: &[(&str, &str)]) -> (ServeChild, PathBuf) {
        let env_file = dir.join("app.env");
        let path = env_file.to_str().unwrap();
        let env = [env, &[("ENV_FILE", path)]].concat();
        let serve = Self::start(&dir.join("data"), &env).await;
        (serve, env_file)
    }

    /// `start` in the working directory `cwd` (where `serve` reads `.env`),
    /// with no `API_TOKEN` or `WEBHOOK_SECRET` from the test's environment.
    pub async fn start_in(cwd: Option<&Path>, data_dir: &Path, env: &[(&str, &str)]) -> ServeChild {
        Self::spawn(cwd, data_dir, env, &[]).await
    }

    /// `start` without the variables `remove` from the test's environment
    /// (e.g. `DATABASE_URL`, `SAFE_OUTCOMES_TEST_PG` for a sled instance).
    pub async fn start_without(
        data_dir: &Path,
        env: &[(&str, &str)],
        remove: &[&str],
    ) -> ServeChild {
        Self::spawn(None, data_dir, env, remove).await
    }

    async fn spawn(
        cwd: Option<&Path>,
        data_dir: &Path,
        env: &[(&str, &str)],
        remove: &[&str],
    ) -> ServeChild {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_safe-outcomes"));
        if let Some(cwd) = cwd {
            cmd.current_dir(cwd)
                .env_remove("API_TOKEN")
                .env_remove("WEBHOOK_SECRET");
        }
        cmd.arg("serve")
            .env("DATA_DIR", data_dir)
            .env("PORT", "0")
            .env("HOST", "127.0.0.1")
            .env_remove("APP_ID")
            .env_remove("PRIVATE_KEY_PATH")
            .env("LOG_FORMAT", "pretty")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for k in remove {
            cmd.env_remove(k);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn safe-outcomes serve");
        let reaper = super::guard::Reaper::new(
            super::guard::Target::Process(child.id().expect("a running child")),
            false,
        );
        let output = Arc::new(Mutex::new(String::new()));
        let (url_tx, url_rx) = tokio::sync::oneshot::channel();
        let stdout = child.stdout.take().unwrap();
        let stderr = child.stderr.take().unwrap();
        let out = output.clone();
        tokio::spawn(async move {
            let mut url_tx = Some(url_tx);
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(url) = line.strip_prefix("listening on ") {
                    if let Some(tx) = url_tx.take() {
                        let _ = tx.send(url.trim().to_string());
                    }
                }
                out.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        let err = output.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                err.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        let url = tokio::time::timeout(Duration::from_secs(60), url_rx)
            .await
            .expect("serve printed its address within 60 s")
            .expect("serve printed its address");
        ServeChild {
            child,
            _reaper: reaper,
            url,
            output,
        }
    }

    pub fn output(&self) -> String {
        self.output.lock().unwrap().clone()
    }

    /// SIGKILL: no shutdown code runs.
    pub async fn kill9(&mut self) {
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }

    /// SIGTERM and wait for a clean exit.
    pub async fn terminate(&mut self) {
        if let Some(pid) = self.child.id() {
            let _ = std::process::Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status();
        }
        let _ = tokio::time::timeout(Duration::from_secs(30), self.child.wait()).await;
        // Let the readers take the last lines.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
