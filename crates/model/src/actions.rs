//! One table from a thread action to the observation it is, shared by the
//! webhook path (`ingest::webhook::threads`: an `issues`/`pull_request` delivery's
//! `action`) and the API path (`ingest::reconcile::map`: a timeline event's name).
//! Each path reads the facts from its own payload model into `ActionFacts`;
//! what only one path knows (an edit's old values, a push's SHAs, a
//! cross-reference) stays with that path.

use super::ObservationKind as K;

/// What a thread action names, as either path read it.
#[derive(Debug, Default, Clone)]
pub struct ActionFacts {
    pub label: Option<String>,
    pub assignee: Option<String>,
    pub milestone: Option<String>,
    pub reviewer: Option<String>,
    pub team: Option<String>,
}

/// The observation of `action`: `None` when the table does not know the
/// action (the caller's own arms decide), `Some(None)` when it does but the
/// facts lack what the observation needs.
pub fn thread_action(action: &str, f: &ActionFacts) -> Option<Option<K>> {
    let need = |v: &Option<String>| v.clone();
    Some(match action {
        "closed" => Some(K::Closed),
        "reopened" => Some(K::Reopened),
        "labeled" => need(&f.label).map(|label| K::Labeled { label }),
        "unlabeled" => need(&f.label).map(|label| K::Unlabeled { label }),
        "assigned" => need(&f.assignee).map(|assignee| K::Assigned { assignee }),
        "unassigned" => need(&f.assignee).map(|assignee| K::Unassigned { assignee }),
        "milestoned" => need(&f.milestone).map(|milestone| K::Milestoned { milestone }),
        "demilestoned" => need(&f.milestone).map(|milestone| K::Demilestoned { milestone }),
        "review_requested" | "review_request_removed" => {
            let (reviewer, team) = (f.reviewer.clone(), f.team.clone());
            if reviewer.is_none() && team.is_none() {
                None
            } else if action == "review_requested" {
                Some(K::ReviewRequested { reviewer, team })
            } else {
                Some(K::ReviewRequestRemoved { reviewer, team })
            }
        }
        "ready_for_review" => Some(K::ReadyForReview),
        "converted_to_draft" => Some(K::ConvertedToDraft),
        "transferred" => Some(K::Transferred),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_actions_need_their_facts_and_unknown_ones_are_left_to_the_caller() {
        let none = ActionFacts::default();
        assert_eq!(thread_action("closed", &none), Some(Some(K::Closed)));
        assert_eq!(thread_action("labeled", &none), Some(None));
        let f = ActionFacts {
            label: Some("bug".into()),
            team: Some("core".into()),
            ..ActionFacts::default()
        };
        assert_eq!(
            thread_action("labeled", &f),
            Some(Some(K::Labeled {
                label: "bug".into()
            }))
        );
        assert_eq!(
            thread_action("review_request_removed", &f),
            Some(Some(K::ReviewRequestRemoved {
                reviewer: None,
                team: Some("core".into())
            }))
        );
        assert_eq!(thread_action("review_requested", &none), Some(None));
        assert_eq!(thread_action("synchronize", &f), None);
    }
}
