//! The owner's project (Projects v2): its items, their single-select field
//! values, archives, deletions, order and conversions, as GitHub keeps them.
//! The project belongs to the repository's owner (an organization), not to
//! the repository: it exists before any history (number `NUMBER`, created by
//! `CREATOR`), and a history only adds items to it, changes them, or deletes
//! it. Every change here is told by a `projects_v2_item` or `projects_v2`
//! delivery (`webhooks::projects`); GitHub writes no entry of it in the
//! content's REST timeline.
//!
//! Projects created during a history (`create_project`'s: `Fact::Project`)
//! are kept apart (`CreatedProject`): their number, creator, and whether
//! and since when they are closed, which is all GitHub answers of a
//! project's state (`closed`, `closedAt`; no closer, no past closes).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::{Changed, World};
use crate::bench::github_model::history::{Actor, ProjectAct};

/// The project's number under its owner (`https://github.com/orgs/{owner}/projects/7`).
pub const NUMBER: u64 = 7;
/// Its GraphQL node id.
pub(crate) const NODE_ID: &str = "PVT_kwDOCN7GP84AAAAH";
/// Who created it, before any history.
pub(crate) const CREATOR: &str = "alice";
/// The one single-select field the model sets, its node id and options.
pub const STATUS: &str = "Status";
pub(crate) const STATUS_NODE_ID: &str = "PVTSSF_lADOCN7GP84AAAAHzgStatus";
pub const OPTIONS: [&str; 4] = ["Backlog", "Todo", "In Progress", "Done"];

/// One item of the project.
#[derive(Debug, Clone)]
pub struct ProjectItem {
    pub id: u64,
    /// The issue or PR it shows; `None` for a draft issue.
    pub number: Option<u64>,
    /// A draft's title (kept after its conversion).
    pub title: String,
    pub creator: Actor,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub archived_at: Option<DateTime<Utc>>,
    /// Deleted (kept so the delivery telling it renders the item).
    pub deleted: bool,
    /// Field name → value (single-select option names).
    pub fields: BTreeMap<String, String>,
}

impl ProjectItem {
    /// The node id GitHub gives it.
    pub fn node_id(&self) -> String {
        format!("PVTI_lADOCN7GP84AAAAHzg{}", self.id)
    }

    fn live(&self) -> bool {
        !self.deleted
    }
}

/// The owner's project.
#[derive(Debug, Clone, Default)]
pub struct Project {
    /// Deleted, when and by whom.
    pub deleted: Option<(DateTime<Utc>, Actor)>,
    pub updated_at: Option<DateTime<Utc>>,
    pub items: BTreeMap<u64, ProjectItem>,
    /// The items' order in the project (item ids, first first).
    pub order: Vec<u64>,
}

impl Project {
    /// When it was created: before any generated history.
    pub fn created_at() -> DateTime<Utc> {
        "2026-01-05T09:00:00Z".parse().expect("a time")
    }

    /// The live item before `item` in the order (`None`: it is first).
    pub fn previous(&self, item: u64) -> Option<u64> {
        let live: Vec<u64> = self
            .order
            .iter()
            .copied()
            .filter(|i| self.items.get(i).is_some_and(ProjectItem::live))
            .collect();
        let pos = live.iter().position(|i| *i == item)?;
        pos.checked_sub(1).map(|p| live[p])
    }
}

/// A project of the owner created during the history.
#[derive(Debug, Clone)]
pub struct CreatedProject {
    /// The organization that owns it: the repository's owner when it was
    /// created (a repository moved to another owner leaves it there).
    pub owner: String,
    pub number: u64,
    pub title: String,
    pub creator: Actor,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Closed since (`None`: open).
    pub closed_at: Option<DateTime<Utc>>,
    /// Deleted, when and by whom (kept so the delivery telling it renders
    /// the project; GitHub answers it `NOT_FOUND` from then on).
    pub deleted: Option<(DateTime<Utc>, Actor)>,
}

impl CreatedProject {
    /// The node id GitHub gives it (unlike project `NUMBER`'s).
    pub fn node_id(&self) -> String {
        format!("PVT_kwDOCN7GP84AAAC{}", self.number)
    }
}

impl World {
    /// An act on one of the owner's projects (`Fact::Project`): what it
    /// changed.
    pub(super) fn project_act(
        &mut self,
        act: &ProjectAct,
        who: &Actor,
        at: DateTime<Utc>,
    ) -> Changed {
        if act.on_created() {
            self.created_project_act(act, who, at)
        } else {
            self.apply_project(act, who, at)
        }
    }

    /// A project created, closed or reopened: nothing when it leaves the
    /// project as it was, or names no project created during the history
    /// (project `NUMBER` is created before it), as GitHub then sends
    /// nothing.
    fn created_project_act(&mut self, act: &ProjectAct, who: &Actor, at: DateTime<Utc>) -> Changed {
        let number = act.project();
        if let ProjectAct::Create { title, .. } = act {
            if number == NUMBER || self.created_projects.contains_key(&number) {
                return Changed::Nothing;
            }
            let p = CreatedProject {
                owner: self.repo.split('/').next().unwrap_or_default().to_string(),
                number,
                title: title.clone(),
                creator: who.clone(),
                created_at: at,
                updated_at: at,
                closed_at: None,
                deleted: None,
            };
            self.created_projects.insert(number, p);
            return Changed::Project;
        }
        let Some(p) = self
            .created_projects
            .get_mut(&number)
            .filter(|p| p.deleted.is_none())
        else {
            return Changed::Nothing;
        };
        if let ProjectAct::Delete { .. } = act {
            p.deleted = Some((at, who.clone()));
            p.updated_at = at;
            return Changed::Project;
        }
        let close = matches!(act, ProjectAct::Close { .. });
        if p.closed_at.is_some() == close {
            return Changed::Nothing;
        }
        p.closed_at = close.then_some(at);
        p.updated_at = at;
        Changed::Project
    }

    /// An act on the owner's project `NUMBER` (its items, its deletion):
    /// what it changed. Nothing changes once the project is deleted, nor for
    /// a change that leaves the item as it was (GitHub then records and
    /// sends nothing).
    fn apply_project(&mut self, act: &ProjectAct, who: &Actor, at: DateTime<Utc>) -> Changed {
        if self.project.deleted.is_some() {
            return Changed::Nothing;
        }
        let changed = match act {
            ProjectAct::AddItem {
                item,
                number,
                title,
            } => self.add_item(*item, *number, title, who, at),
            ProjectAct::SetField { item, field, value } => {
                self.set_field(*item, field, value.as_deref(), at)
            }
            ProjectAct::ArchiveItem { item, archived } => self.archive(*item, *archived, at),
            ProjectAct::DeleteItem { item } => self.live_item(*item).map(|it| {
                it.deleted = true;
                it.updated_at = at;
                it.id
            }),
            ProjectAct::ReorderItem { item } => self.reorder(*item, at),
            ProjectAct::ConvertItem { item, number } => self.convert(*item, *number, who, at),
            ProjectAct::Delete { .. } => {
                self.project.deleted = Some((at, who.clone()));
                self.project.updated_at = Some(at);
                return Changed::Project;
            }
            _ => None,
        };
        match changed {
            Some(item) => {
                self.project.updated_at = Some(at);
                Changed::ProjectItem(item)
            }
            None => Changed::Nothing,
        }
    }

    fn live_item(&mut self, item: u64) -> Option<&mut ProjectItem> {
        self.project.items.get_mut(&item).filter(|i| i.live())
    }

    /// A content already in the project is not added again (GitHub answers
    /// the item it has); a content that is not here cannot be added.
    fn add_item(
        &mut self,
        item: u64,
        number: Option<u64>,
        title: &str,
        who: &Actor,
        at: DateTime<Utc>,
    ) -> Option<u64> {
        let known = self.project.items.contains_key(&item);
        let shown = number.is_some_and(|n| {
            self.project
                .items
                .values()
                .any(|i| i.live() && i.number == Some(n))
        });
        let missing = number.is_some_and(|n| !self.threads.contains_key(&n));
        if known || shown || missing {
            return None;
        }
        self.project.items.insert(
            item,
            ProjectItem {
                id: item,
                number,
                title: title.to_string(),
                creator: who.clone(),
                created_at: at,
                updated_at: at,
                archived_at: None,
                deleted: false,
                fields: BTreeMap::new(),
            },
        );
        self.project.order.push(item);
        Some(item)
    }

    fn set_field(
        &mut self,
        item: u64,
        field: &str,
        value: Option<&str>,
        at: DateTime<Utc>,
    ) -> Option<u64> {
        let it = self.live_item(item)?;
        if it.fields.get(field).map(String::as_str) == value {
            return None;
        }
        match value {
            Some(v) => it.fields.insert(field.to_string(), v.to_string()),
            None => it.fields.remove(field),
        };
        it.updated_at = at;
        Some(item)
    }

    fn archive(&mut self, item: u64, archived: bool, at: DateTime<Utc>) -> Option<u64> {
        let it = self.live_item(item)?;
        if it.archived_at.is_some() == archived {
            return None;
        }
        it.archived_at = archived.then_some(at);
        it.updated_at = at;
        Some(item)
    }

    /// Move `item` to the top of the project: nothing when it is there, or
    /// alone.
    fn reorder(&mut self, item: u64, at: DateTime<Utc>) -> Option<u64> {
        self.live_item(item)?;
        self.project.previous(item)?;
        self.project.order.retain(|i| *i != item);
        self.project.order.insert(0, item);
        self.live_item(item)?.updated_at = at;
        Some(item)
    }

    /// A draft becomes issue `number`, opened by whoever converts it.
    fn convert(&mut self, item: u64, number: u64, who: &Actor, at: DateTime<Utc>) -> Option<u64> {
        let it = self.live_item(item)?;
        if it.number.is_some() {
            return None;
        }
        let title = it.title.clone();
        if self.threads.contains_key(&number) || self.moved.contains_key(&number) {
            return None;
        }
        let it = self.live_item(item)?;
        it.number = Some(number);
        it.updated_at = at;
        self.open(number, &title, "", who, at, None);
        Some(item)
    }
}
