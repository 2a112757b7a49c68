//! `update_project`'s write and what people and bots do to the owner's
//! project after it (`world::projects`): the agent adds a person's issue to
//! the project and sets its `Status` (as gh-aw's handler does, and its
//! manifest line says: `project` URL, `content_number`, `fields`); then
//! anyone of `people()` moves the status, archives or restores the item,
//! deletes it, moves it in the order, adds a draft and converts it into an
//! issue, or deletes the project.

use serde_json::json;

use super::Builder;
use crate::bench::github_model::history::{Fact, ProjectAct};
use crate::bench::github_model::world::projects::{NUMBER, OPTIONS, STATUS};
use crate::model::OutputType;

impl Builder<'_, '_> {
    /// The project's URL, under the repository's owner.
    fn project_url(&self) -> String {
        format!(
            "https://github.com/orgs/{}/projects/{NUMBER}",
            self.h.owner()
        )
    }

    /// `create_project` and `create_project_status_update` name the project
    /// only; `update_project` adds carol's issue `n` to it and sets its
    /// status (`n + 1` is kept for the issue a draft may become).
    pub(super) fn project_output(&mut self, t: &OutputType, n: u64) {
        let project = self.project_url();
        if *t == OutputType::CreateProject {
            return self.create_project(t);
        }
        if *t != OutputType::UpdateProject {
            self.line(t, json!({"project": project, "content_number": n}));
            return;
        }
        self.human_issue(n);
        let item = self.id();
        self.agent(Fact::Project(ProjectAct::AddItem {
            item,
            number: Some(n),
            title: String::new(),
        }));
        self.agent(Fact::Project(ProjectAct::SetField {
            item,
            field: STATUS.into(),
            value: Some("Todo".into()),
        }));
        self.line(
            t,
            json!({"project": project, "content_type": "issue", "content_number": n,
                   "fields": {STATUS: "Todo"}}),
        );
        self.project_follow_ups(item, n + 1);
    }

    /// `create_project`: the agent creates project `NUMBER + 1` of the
    /// owner at the run (`projects_v2.created`); its line names the
    /// project's URL (gh-aw's manifest takes `url` from the handler's
    /// `projectUrl`) and title. Then anyone of `people()` closes it,
    /// closes it and someone (anyone) reopens it later, or deletes it.
    fn create_project(&mut self, t: &OutputType) {
        let number = NUMBER + 1;
        let title = "Flaky test triage";
        let create = ProjectAct::Create {
            number,
            title: title.into(),
        };
        self.agent(Fact::Project(create));
        let url = format!(
            "https://github.com/orgs/{}/projects/{number}",
            self.h.owner()
        );
        self.line(t, json!({"url": url, "title": title}));
        self.follow_ups_of(3, |b, choice, _, at| {
            if choice == 2 {
                return Some(Fact::Project(ProjectAct::Delete { number }));
            }
            if choice == 1 {
                // Closed first, by anyone, just before.
                let closer = b.who();
                let before = at - chrono::Duration::minutes(1);
                b.h.push(before, &closer, Fact::Project(ProjectAct::Close { number }));
                return Some(Fact::Project(ProjectAct::Reopen { number }));
            }
            Some(Fact::Project(ProjectAct::Close { number }))
        });
    }

    /// People's and bots' changes to the project after the agent's: on the
    /// agent's item, or on a draft (`draft`) someone adds and may convert
    /// into issue `new_issue`.
    fn project_follow_ups(&mut self, item: u64, new_issue: u64) {
        let draft = self.id();
        let add_draft = Fact::Project(ProjectAct::AddItem {
            item: draft,
            number: None,
            title: "An idea".into(),
        });
        self.follow_ups_of(9, |b, choice, who, at| {
            let on = if b.chance(3) { draft } else { item };
            // A draft to reorder against or convert: added just before
            // (nothing when it is there already).
            let just_before = at - chrono::Duration::minutes(1);
            if matches!(choice, 4 | 6) {
                b.h.push(just_before, who, add_draft.clone());
            }
            // Restored: archived first, by someone.
            if choice == 2 {
                let archiver = b.who();
                let archive = Fact::Project(ProjectAct::ArchiveItem {
                    item: on,
                    archived: true,
                });
                b.h.push(just_before, &archiver, archive);
            }
            if choice == 5 {
                return Some(add_draft.clone());
            }
            Some(Fact::Project(match choice {
                0 => {
                    let value =
                        (b.c.pick(4) != 0).then(|| OPTIONS[b.c.pick(OPTIONS.len())].to_string());
                    ProjectAct::SetField {
                        item: on,
                        field: STATUS.into(),
                        value,
                    }
                }
                1 => ProjectAct::ArchiveItem {
                    item: on,
                    archived: true,
                },
                2 => ProjectAct::ArchiveItem {
                    item: on,
                    archived: false,
                },
                3 => ProjectAct::DeleteItem { item: on },
                4 => ProjectAct::ReorderItem { item: on },
                6 => ProjectAct::ConvertItem {
                    item: draft,
                    number: new_issue,
                },
                7 => ProjectAct::Delete { number: NUMBER },
                _ => ProjectAct::SetField {
                    item,
                    field: STATUS.into(),
                    value: Some(OPTIONS[b.c.pick(OPTIONS.len())].to_string()),
                },
            }))
        });
    }
}
