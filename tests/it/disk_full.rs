//! A full disk, for real: `serve` on a sled store inside a small tmpfs,
//! filled to the last page by a filler file. Deliveries are refused with 503
//! and `Retry-After` (never a 2xx for what could not be written, never a
//! 500), readiness (`/ready`, `/status`) answers 503 with the cause, reads
//! answer 503; once the filler is gone, the same process reopens its store
//! by itself (`store::heal`), readiness recovers, ingest resumes, and every
//! acknowledged delivery is there and processed — without a restart.
//!
//! Mounting a tmpfs needs root (CI runs as root). Elsewhere the test says
//! why it skips, unless `CI` is set, where it fails: the engine-level
//! injected-ENOSPC test (`store::heal::tests`) runs everywhere.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chrono::{DateTime, Duration as ChronoDuration, Utc};
use safe_outcomes::bench::payloads::{issue, IssueEvent};
use safe_outcomes::ingest::signature;
use serde_json::Value;

const SECRET: &str = "disk-full-secret";
const TOKEN: &str = "disk-full-token";
const REPO: &str = "acme/widgets";

/// A tmpfs mounted for the test, unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// Mount a tmpfs of `size` (e.g. `8m`), or say why it cannot be.
    fn mount(size: &str) -> Result<Tmpfs, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output()
            .map_err(|e| format!("mount: {e}"))?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
        }
        Ok(Tmpfs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// Fill the filesystem holding `dir` with one file, to the last byte it takes.
fn fill(dir: &Path) -> PathBuf {
    use std::io::Write;
    let path = dir.join("filler");
    let mut file = std::fs::File::create(&path).expect("create the filler");
    for size in [1 << 16, 4096, 512, 1] {
        let chunk = vec![0xA5u8; size];
        while file.write_all(&chunk).is_ok() {}
    }
    let _ = file.sync_all();
    path
}

fn opened_at() -> DateTime<Utc> {
    "2024-03-01T09:00:00Z".parse().unwrap()
}

/// An issue opened by the gh-aw bot for run `run`: one inbox item, one output.
fn opened(number: u64) -> Vec<u8> {
    issue(&IssueEvent {
        repo: REPO,
        number,
        action: "opened",
        at: opened_at() + ChronoDuration::minutes(number as i64),
        sender: "github-actions[bot]",
        gh_aw_run: Some(8000 + number),
        label: None,
        comment_id: None,
    })
    .to_string()
    .into_bytes()
}

struct Http {
    base: String,
    http: reqwest::Client,
}

/// One answer: status, `Retry-After`, body.
struct Answer {
    status: u16,
    retry_after: Option<String>,
    body: Value,
}

impl Http {
    async fn answer(resp: reqwest::Response) -> Answer {
        let status = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let text = resp.text().await.unwrap_or_default();
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Answer {
            status,
            retry_after,
            body,
        }
    }

    async fn deliver(&self, delivery: &str, number: u64) -> Answer {
        let body = opened(number);
        let resp = self
            .http
            .post(format!("{}/api/github/webhooks", self.base))
            .header("content-type", "application/json")
            .header("x-github-event", "issues")
            .header("x-github-delivery", delivery)
            .header("x-hub-signature-256", signature::sign(SECRET, &body))
            .body(body)
            .send()
            .await
            .expect("the server answers");
        Self::answer(resp).await
    }

    /// Five more deliveries (numbered on from `number`), each accepted
    /// (202, or the failure says `when`); their ids added to `acked`.
    async fn five_accepted(&self, number: &mut u64, acked: &mut Vec<String>, when: &str) {
        for _ in 0..5 {
            *number += 1;
            let id = format!("df-{number}");
            let a = self.deliver(&id, *number).await;
            assert_eq!(a.status, 202, "{when}: {}", a.body);
            acked.push(id);
        }
    }

    async fn get(&self, path: &str) -> Answer {
        let resp = self
            .http
            .get(format!("{}{path}", self.base))
            .bearer_auth(TOKEN)
            .send()
            .await
            .expect("the server answers");
        Self::answer(resp).await
    }

    /// Poll `path` until `done` says so, within `within`.
    async fn wait_for(
        &self,
        path: &str,
        within: Duration,
        done: impl Fn(&Answer) -> bool,
    ) -> Answer {
        let started = Instant::now();
        loop {
            let a = self.get(path).await;
            if done(&a) || started.elapsed() > within {
                return a;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// The test's answer to "may it mount here": the mount, or `None` after
/// saying why it skips (outside CI only).
fn tmpfs_or_skip() -> Option<Tmpfs> {
    match Tmpfs::mount("8m") {
        Ok(t) => Some(t),
        Err(why) if std::env::var_os("CI").is_some() => {
            panic!("disk_full needs a tmpfs under CI (run as root): {why}")
        }
        Err(why) => {
            eprintln!("SKIPPED disk_full: cannot mount a tmpfs ({why}); run as root");
            None
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_refuses_with_503_then_ingest_resumes_without_a_restart() {
    let Some(tmpfs) = tmpfs_or_skip() else {
        return;
    };
    let data = tmpfs.path().join("data");
    let env = vec![
        ("WEBHOOK_SECRET", SECRET),
        ("API_TOKEN", TOKEN),
        ("LOG_LEVEL", "warn"),
    ];
    let mut server = crate::load::serve_on(&data, env, None).await;
    let c = Http {
        base: server.url.clone(),
        http: reqwest::Client::new(),
    };
    let mut acked: Vec<String> = Vec::new();
    let mut number = 0u64;
    // Before: accepted.
    c.five_accepted(&mut number, &mut acked, "before").await;
    assert_eq!(c.get("/ready").await.status, 200);

    // The disk fills: deliveries go on until one is refused.
    let filler = fill(tmpfs.path());
    let mut refused = None;
    for _ in 0..2000 {
        number += 1;
        let id = format!("df-{number}");
        let a = c.deliver(&id, number).await;
        match a.status {
            202 => acked.push(id),
            503 => {
                refused = Some(a);
                break;
            }
            other => panic!("a delivery on a full disk got {other}: {}", a.body),
        }
    }
    let refused = refused.expect("a delivery refused on a full disk");
    assert_eq!(
        refused.retry_after.as_deref(),
        Some("2"),
        "{}",
        refused.body
    );

    // Readiness says why; reads and writes answer 503, never 500.
    let ready = c.get("/ready").await;
    assert_eq!(ready.status, 503, "{}", ready.body);
    assert!(ready.retry_after.is_some());
    let cause = ready.body["store"]["cause"].as_str().unwrap_or_default();
    assert!(!cause.is_empty(), "{}", ready.body);
    assert_eq!(ready.body["store"]["writable"], false, "{}", ready.body);
    let status = c.get("/status").await;
    assert_eq!(status.status, 503, "{}", status.body);
    assert_eq!(status.body["database"]["store"]["writable"], false);
    for _ in 0..3 {
        number += 1;
        let a = c.deliver(&format!("df-{number}"), number).await;
        assert_eq!(a.status, 503, "{}", a.body);
        assert!(a.retry_after.is_some());
    }
    let read = c.get("/api/v1/outputs").await;
    assert!(
        read.status == 503 || read.status == 200,
        "a read on a full disk got {}: {}",
        read.status,
        read.body
    );
    assert_eq!(c.get("/ping").await.status, 200, "liveness stays");

    // Space back: the same process reopens its store and takes deliveries.
    std::fs::remove_file(&filler).unwrap();
    let ready = c
        .wait_for("/ready", Duration::from_secs(30), |a| a.status == 200)
        .await;
    assert_eq!(
        ready.status, 200,
        "readiness never recovered: {}",
        ready.body
    );
    assert!(ready.body["store"]["reopens"].as_u64().unwrap() >= 1);
    c.five_accepted(&mut number, &mut acked, "after space came back")
        .await;

    // Everything acknowledged is stored, once, and processed.
    let status = c
        .wait_for("/status", Duration::from_secs(30), |a| {
            let d = &a.body["deliveries"];
            a.status == 200 && d["backlog"] == 0 && d["processed"] == d["received"]
        })
        .await;
    let d = &status.body["deliveries"];
    assert_eq!(status.status, 200, "{}", status.body);
    assert_eq!(
        d["received"].as_u64(),
        Some(acked.len() as u64),
        "{d}\nSERVER:\n{}",
        server.output()
    );
    assert_eq!(d["processed"], d["received"], "{d}");
    for id in &acked {
        let n: u64 = id.trim_start_matches("df-").parse().unwrap();
        let again = c.deliver(id, n).await;
        assert_eq!(
            again.status, 200,
            "{id} was acknowledged, so it is a duplicate now"
        );
    }
    let outputs = c.get("/api/v1/outputs?limit=1000").await;
    assert_eq!(outputs.status, 200, "{}", outputs.body);
    server.terminate().await;
    drop(tmpfs);
}
