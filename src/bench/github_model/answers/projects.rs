//! GraphQL's answer about a project of the owner created during the
//! history (`world::projects::CreatedProject`): `ProjectV2` as
//! `repositoryOwner(login).projectV2(number)` gives it (`@octokit/graphql-schema`:
//! `closed`, `closedAt`, `createdAt`, `updatedAt`, `creator`). GitHub's
//! schema has no field naming who closed a project, and keeps no past
//! closes: a project reopened answers `closed: false`, `closedAt: null`.

use serde_json::{json, Value};

use super::super::world::World;
use super::actor;

/// `projectV2(number)` of `owner` in `w`, `None` when it has none or it
/// was deleted (GitHub's `NOT_FOUND`, naming neither who nor when).
pub(crate) fn project_v2(w: &World, owner: &str, number: u64) -> Option<Value> {
    let p = w
        .created_projects
        .get(&number)
        .filter(|p| p.owner.eq_ignore_ascii_case(owner) && p.deleted.is_none())?;
    Some(json!({
        "id": p.node_id(), "number": p.number, "title": p.title,
        "closed": p.closed_at.is_some(),
        "closedAt": p.closed_at.map(super::iso),
        "createdAt": super::iso(p.created_at), "updatedAt": super::iso(p.updated_at),
        "creator": actor(&p.creator),
    }))
}
