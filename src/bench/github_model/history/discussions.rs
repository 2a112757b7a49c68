//! What people and bots do to a discussion once it exists, beyond opening,
//! commenting, answering, closing and reopening (their own `Fact`s): the
//! acts GitHub tells by a `discussion` or `discussion_comment` webhook
//! (`edited`, `labeled`, `locked`, `pinned`, `category_changed`,
//! `transferred`, `deleted`, `unanswered`; a comment's `edited` and
//! `deleted`). One `Fact::DiscussionAct` carries each, so that the family
//! adds one variant to `Fact`.

/// One act on discussion `number` (or on one of its comments).
#[derive(Debug, Clone, PartialEq)]
pub enum DiscussionAct {
    /// Title and/or body changed (`discussion.edited`, `changes.*.from`).
    Edit {
        title: Option<String>,
        body: Option<String>,
    },
    /// A label added (`labeled`) or removed (`unlabeled`).
    Label { name: String, added: bool },
    /// Conversation locked (`locked`) or unlocked (`unlocked`).
    Lock { locked: bool },
    /// Pinned to the repository's discussions (`pinned`/`unpinned`).
    Pin { pinned: bool },
    /// Moved to another category, by slug (`category_changed`).
    Category { slug: String },
    /// Moved to repository `to` (as `new_number` there): it leaves this
    /// repository (`transferred`).
    Transfer { to: String, new_number: u64 },
    /// Deleted (`deleted`): gone from the repository.
    Delete,
    /// The chosen answer withdrawn (`unanswered`, with `old_answer`).
    Unanswer,
    /// A comment's body changed (`discussion_comment.edited`).
    EditComment { id: u64, body: String },
    /// A comment deleted (`discussion_comment.deleted`).
    DeleteComment { id: u64 },
}

impl DiscussionAct {
    /// The categories a discussion can move between: slug, name, whether
    /// it takes answers.
    pub(crate) const CATEGORIES: &'static [(&'static str, &'static str, bool)] = &[
        ("general", "General", false),
        ("ideas", "Ideas", false),
        ("q-a", "Q&A", true),
    ];
}
