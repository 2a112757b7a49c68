//! Line attribution records (`attribution::record`), in their own sled tree
//! `attribution` so they stay apart from the main tree's layout: key `l/`
//! + output id, value `LineAttribution` (ranges and survival results).

use super::{decode, encode, Result, Store};
use crate::model::attribution::LineAttribution;

const TREE: &str = "attribution";

fn key(output_id: &str) -> Vec<u8> {
    let mut k = b"l/".to_vec();
    k.extend_from_slice(output_id.as_bytes());
    k
}

/// The attribution of an output, if its code landed.
pub fn get(store: &Store, output_id: &str) -> Result<Option<LineAttribution>> {
    let k = key(output_id);
    match store.db().open_tree(TREE)?.get(&k)? {
        Some(v) => Ok(Some(decode(&k, &v)?)),
        None => Ok(None),
    }
}

/// Store (or replace) an output's attribution.
pub fn put(store: &Store, a: &LineAttribution) -> Result<()> {
    store
        .db()
        .open_tree(TREE)?
        .insert(key(&a.output_id), encode(a))?;
    Ok(())
}

/// The attributions of the outputs of one repository (as written), in
/// output id order.
pub fn of_repo(store: &Store, repo: &str) -> Result<impl Iterator<Item = Result<LineAttribution>>> {
    let tree = store.db().open_tree(TREE)?;
    Ok(tree.scan_prefix(key(&format!("{repo}:"))).map(|item| {
        let (k, v) = item?;
        decode(&k, &v)
    }))
}
