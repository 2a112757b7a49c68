//! `safe-outcomes report --format opentraces`: the opentraces export from the
//! store (`--data-dir`, or `--database-url` on PostgreSQL) or from a
//! running server (`--from URL`).

use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context};

use super::{write_lines, Format};
use crate::ingest::client::Client;
use crate::read::query::{ReadFilter, RepoScope};

/// Write one opentraces line per evaluated output (of `repo`, when given).
pub async fn report_opentraces(
    from: Option<&str>,
    token: Option<String>,
    (data_dir, database_url): (&Path, Option<&str>),
    repo: Option<&str>,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    match from {
        Some(url) => {
            let mut query = vec![("format", "opentraces")];
            if let Some(r) = repo {
                query.push(("repo", r));
            }
            let path = format!(
                "/api/v1/export?{}",
                serde_urlencoded::to_string(&query).context("encoding the query")?
            );
            let answer = Client::new(url, None, token).get(&path).await?;
            if answer.status != 200 {
                bail!("{url} answered {}: {}", answer.status, answer.body);
            }
            let body = answer.body.as_str().unwrap_or_default();
            out.write_all(body.as_bytes())?;
        }
        None => {
            let store = crate::store::open_for_reading(data_dir, database_url)?;
            let filter = ReadFilter {
                repo: repo.map(str::to_string),
                ..Default::default()
            };
            let mut failed = None;
            write_lines(
                &store,
                &filter,
                &RepoScope::All,
                Format::Opentraces,
                |line| {
                    failed = out.write_all(&line).err();
                    failed.is_none()
                },
            )?;
            if let Some(e) = failed {
                return Err(e.into());
            }
        }
    }
    out.flush()?;
    Ok(())
}
