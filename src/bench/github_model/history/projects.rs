//! What is done to the owner's projects (Projects v2) as a project, beyond
//! its items: a project created, closed or reopened. GitHub tells each by a
//! `projects_v2` webhook (`created`, `closed`, `reopened`), and writes no
//! entry of it in any issue's timeline. One `Fact::Project` carries each,
//! so that the family adds one variant to `Fact`.

/// One act on project `number` of the repository's owner.
#[derive(Debug, Clone, PartialEq)]
pub enum ProjectAct {
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
    /// The project it acts on.
    pub fn number(&self) -> u64 {
        match self {
            ProjectAct::Create { number, .. }
            | ProjectAct::Close { number }
            | ProjectAct::Reopen { number } => *number,
        }
    }
}
