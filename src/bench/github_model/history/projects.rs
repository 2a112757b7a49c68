//! What is done to the owner's projects (Projects v2): to the items of its
//! project `world::projects::NUMBER`, which exists before any history (an
//! item added, a field set, archived, deleted, moved, converted; the
//! project deleted), and to a project created during the history (created,
//! closed, reopened). GitHub tells each by a `projects_v2_item` or
//! `projects_v2` webhook, and writes no entry of it in any issue's
//! timeline. One `Fact::Project` carries each, so that the family is one
//! variant of `Fact`, and one arm wherever facts are dispatched.

/// One act on one of the owner's projects.
#[derive(Debug, Clone, PartialEq)]
pub enum ProjectAct {
    /// Issue or PR `number` (or, with none, a draft issue titled `title`)
    /// added to the owner's project as item `item` (`projects_v2_item.created`).
    AddItem {
        item: u64,
        number: Option<u64>,
        title: String,
    },
    /// A single-select field of item `item` set to `value` (cleared when
    /// `None`): `projects_v2_item.edited` with `changes.field_value`.
    SetField {
        item: u64,
        field: String,
        value: Option<String>,
    },
    /// Item `item` archived (or restored): `projects_v2_item.archived` /
    /// `restored`.
    ArchiveItem { item: u64, archived: bool },
    /// Item `item` deleted from the project (`projects_v2_item.deleted`).
    DeleteItem { item: u64 },
    /// Item `item` moved in the project's order (`projects_v2_item.reordered`).
    ReorderItem { item: u64 },
    /// Draft item `item` converted into issue `number` of this repository:
    /// GitHub opens the issue (`issues.opened`) and sends
    /// `projects_v2_item.converted`.
    ConvertItem { item: u64, number: u64 },
    /// Project `number` deleted, with its items (`projects_v2.deleted`):
    /// the owner's project `NUMBER` or one created during the history.
    Delete { number: u64 },
    /// Project `number` created, titled `title` (`projects_v2.created`):
    /// nothing when the owner has a project of that number already.
    Create { number: u64, title: String },
    /// Closed (`projects_v2.closed`, `closed_at` set): nothing when closed.
    Close { number: u64 },
    /// Open again (`projects_v2.reopened`, `closed_at` cleared): nothing
    /// when open.
    Reopen { number: u64 },
}

impl ProjectAct {
    /// The number of the project it acts on (the owner's project
    /// `world::projects::NUMBER` for its items and its deletion).
    pub fn project(&self) -> u64 {
        match self {
            ProjectAct::Create { number, .. }
            | ProjectAct::Close { number }
            | ProjectAct::Reopen { number }
            | ProjectAct::Delete { number } => *number,
            _ => super::super::world::projects::NUMBER,
        }
    }

    /// True for an act on a project created during the history (create,
    /// close, reopen, delete), which `world::projects::CreatedProject`
    /// holds.
    pub(crate) fn on_created(&self) -> bool {
        self.project() != super::super::world::projects::NUMBER
    }
}
