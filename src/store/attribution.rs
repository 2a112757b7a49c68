//! Line attribution records (`attribution::record`), in their own sled tree
//! `attribution` so they stay apart from the main tree's layout:
//!
//! | prefix | key | value |
//! |---|---|---|
//! | `l/` | output id | `LineAttribution` |
//! | `p/` | repository, NUL, path, NUL, output id | — (attributed paths, for survival) |
//! | `d/` | repository, NUL, path | `DirtyMark`: a default-branch push changed the path |
//! | `f/` | repository | `DirtyMark`: a force push; every path of the repository is dirty |

use serde::{Deserialize, Serialize};

use super::{decode, encode, Result, Store};
use crate::attribution::record::LineAttribution;

const TREE: &str = "attribution";

fn tree(store: &Store) -> Result<sled::Tree> {
    Ok(store.db().open_tree(TREE)?)
}

fn key(prefix: &str, parts: &[&str]) -> Vec<u8> {
    let mut k = prefix.as_bytes().to_vec();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            k.push(0);
        }
        k.extend_from_slice(p.as_bytes());
    }
    k
}

/// Why a path (or a whole repository) is dirty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirtyMark {
    /// The push's `after`.
    pub commit: String,
    /// The path was removed (and not renamed) by that push.
    #[serde(default)]
    pub removed: bool,
}

/// The attribution of an output, if its code landed.
pub fn get(store: &Store, output_id: &str) -> Result<Option<LineAttribution>> {
    let k = key("l/", &[output_id]);
    match tree(store)?.get(&k)? {
        Some(v) => Ok(Some(decode(&k, &v)?)),
        None => Ok(None),
    }
}

/// Store an attribution and index its paths.
pub fn put(store: &Store, a: &LineAttribution) -> Result<()> {
    let t = tree(store)?;
    let mut batch = sled::Batch::default();
    batch.insert(key("l/", &[&a.output_id]), encode(a));
    for f in &a.files {
        batch.insert(key("p/", &[&a.repo, &f.path, &a.output_id]), &[]);
    }
    t.apply_batch(batch)?;
    Ok(())
}

/// True when some output's attributed lines live in `path`.
pub fn is_attributed(store: &Store, repo: &str, path: &str) -> Result<bool> {
    let mut prefix = key("p/", &[repo, path]);
    prefix.push(0);
    Ok(tree(store)?
        .scan_prefix(prefix)
        .next()
        .transpose()?
        .is_some())
}

/// Mark a path dirty; the first mark since the last reset wins a removal.
pub fn mark_dirty(store: &Store, repo: &str, path: &str, mark: &DirtyMark) -> Result<()> {
    let t = tree(store)?;
    let k = key("d/", &[repo, path]);
    let merged = match t.get(&k)? {
        Some(v) => {
            let old: DirtyMark = decode(&k, &v)?;
            DirtyMark {
                commit: mark.commit.clone(),
                removed: mark.removed || (old.removed && mark.commit == old.commit),
            }
        }
        None => mark.clone(),
    };
    t.insert(k, encode(&merged))?;
    Ok(())
}

/// Mark every path of a repository dirty (a force push rewrote history).
pub fn mark_repo_dirty(store: &Store, repo: &str, commit: &str) -> Result<()> {
    let mark = DirtyMark {
        commit: commit.to_string(),
        removed: false,
    };
    tree(store)?.insert(key("f/", &[repo]), encode(&mark))?;
    Ok(())
}

/// The dirty mark of a path: its own, or the repository's force-push mark.
pub fn dirty(store: &Store, repo: &str, path: &str) -> Result<Option<DirtyMark>> {
    let t = tree(store)?;
    let k = key("d/", &[repo, path]);
    if let Some(v) = t.get(&k)? {
        return Ok(Some(decode(&k, &v)?));
    }
    let k = key("f/", &[repo]);
    match t.get(&k)? {
        Some(v) => Ok(Some(decode(&k, &v)?)),
        None => Ok(None),
    }
}
