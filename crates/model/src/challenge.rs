//! Closing challenges: the words with which a person says a close was wrong,
//! for seed 000 §7 close_issue "Closed then referenced as mistakenly closed —
//! rejected — medium" (and its note: "inspect timeline comments after closure
//! for reopen attempts or challenge comments"), close_pull_request "Comment
//! indicates premature close — rejected — medium" and close_discussion
//! "Non-bot comments indicate close was wrong — rejected — medium".
//!
//! A comment body challenges a close when, outside quoted lines (`>`) and
//! code (fenced blocks and inline backticks), it holds one of the phrases of
//! [`REOPEN_REQUESTS`] or [`MISTAKEN_CLOSE`], case-insensitively, with runs
//! of whitespace and punctuation read as one space, and no negation
//! ([`NEGATIONS`]) among the three words before it.
//!
//! The limits, on purpose: English only; the phrases are the list, nothing
//! is inferred (a comment saying "this bug is still there" without asking to
//! reopen is not a challenge); a quoted challenge (someone else's words) is
//! not one; an offer such as "feel free to reopen it" is no request, so bare
//! "reopen it" / "reopen this" are not in the list. Ingest sets `ObservationKind::CommentCreated.challenge` from the
//! body on both paths (webhook `issue_comment` / `discussion_comment`, API
//! timeline `commented` and discussion comments); the judge never sees text.

/// Requests to reopen.
pub(crate) const REOPEN_REQUESTS: &[&str] = &[
    "please reopen",
    "pls reopen",
    "plz reopen",
    "kindly reopen",
    "can you reopen",
    "could you reopen",
    "would you reopen",
    "can we reopen",
    "could we reopen",
    "can someone reopen",
    "can this be reopened",
    "could this be reopened",
    "should be reopened",
    "needs to be reopened",
    "please re open",
    "should be re opened",
];

/// Statements that the close was a mistake.
pub(crate) const MISTAKEN_CLOSE: &[&str] = &[
    "closed by mistake",
    "closed in error",
    "closed mistakenly",
    "mistakenly closed",
    "closed wrongly",
    "wrongly closed",
    "closed incorrectly",
    "incorrectly closed",
    "closed prematurely",
    "prematurely closed",
    "closed too early",
    "closed too soon",
    "closed accidentally",
    "accidentally closed",
    "closed erroneously",
    "erroneously closed",
    "should not have been closed",
    "shouldn t have been closed",
    "should not be closed",
    "shouldn t be closed",
    "was not supposed to be closed",
    "wasn t supposed to be closed",
];

/// Words that, among the three before a phrase, turn it around ("no need to
/// reopen it", "don't reopen this").
pub(crate) const NEGATIONS: &[&str] = &["not", "don", "dont", "no", "never", "without"];

/// The body with quoted lines and code removed, lower-cased, every run of
/// characters other than letters and digits made one space.
fn words(body: &str) -> Vec<String> {
    let mut kept = String::new();
    let mut fenced = false;
    for line in body.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced || t.starts_with('>') {
            continue;
        }
        // Inline code: drop what is between backticks.
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 0 {
                kept.push_str(part);
                kept.push(' ');
            }
        }
        kept.push('\n');
    }
    kept.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// Does the body challenge a close (module doc)?
pub fn challenges_close(body: &str) -> bool {
    let w = words(body);
    REOPEN_REQUESTS.iter().chain(MISTAKEN_CLOSE).any(|phrase| {
        let p: Vec<&str> = phrase.split(' ').collect();
        (0..w.len().saturating_sub(p.len() - 1)).any(|i| {
            w[i..i + p.len()].iter().zip(&p).all(|(a, b)| a == b)
                && !w[i.saturating_sub(3)..i]
                    .iter()
                    .any(|x| NEGATIONS.contains(&x.as_str()))
        })
    })
}

/// [`challenges_close`] of an optional body.
pub fn challenge(body: Option<&str>) -> bool {
    body.is_some_and(challenges_close)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn phrase() -> impl Strategy<Value = &'static str> {
        prop::sample::select(
            REOPEN_REQUESTS
                .iter()
                .chain(MISTAKEN_CLOSE)
                .copied()
                .collect::<Vec<_>>(),
        )
    }

    /// Words that are none of the phrases' nor a negation.
    fn filler() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop::sample::select(vec![
                "thanks", "the", "fix", "works", "great", "see", "PR", "issue", "#12", "done",
                "merged", "closing", "this", "is", "ok", "lgtm", "👍",
            ]),
            0..8,
        )
        .prop_map(|w| w.join(" "))
    }

    /// Writes a phrase as people do: any case, spacing and punctuation.
    fn written(phrase: &str, upper: bool, sep: &str) -> String {
        let p = phrase.replace(" t ", "'t ").replace(' ', sep);
        if upper {
            p.to_uppercase()
        } else {
            p
        }
    }

    proptest! {
        #[test]
        fn a_phrase_anywhere_in_a_person_s_words_is_a_challenge(
            p in phrase(), before in filler(), after in filler(), upper: bool,
            sep in prop::sample::select(vec![" ", "  ", "\n", " - "]),
        ) {
            let body = format!("{before}. {} {after}!", written(p, upper, sep));
            prop_assert!(challenges_close(&body), "{:?}", body);
        }

        #[test]
        fn quoted_code_or_negated_phrases_are_not(
            p in phrase(), before in filler(),
            neg in prop::sample::select(vec!["no need to", "don't", "do not", "never"]),
        ) {
            let quoted = format!("{before}\n> {p}\n");
            let fenced = format!("{before}\n```\n{p}\n```\n");
            let inline = format!("{before} `{p}`");
            let negated = format!("{neg} {p}");
            prop_assert!(!challenges_close(&quoted));
            prop_assert!(!challenges_close(&fenced));
            prop_assert!(!challenges_close(&inline));
            prop_assert!(!challenges_close(&negated), "{}", negated);
        }

        #[test]
        fn words_outside_the_vocabulary_never_are(body in filler()) {
            prop_assert!(!challenges_close(&body));
        }
    }

    #[test]
    fn examples() {
        assert!(challenges_close(
            "This was closed by mistake, the bug is still there."
        ));
        assert!(challenges_close(
            "@maintainer can you reopen this? It still fails on 1.2"
        ));
        assert!(challenges_close("This shouldn't have been closed."));
        assert!(!challenges_close(
            "Thanks for closing, no need to reopen it."
        ));
        assert!(!challenges_close("Closed via #12, works for me."));
        assert!(!challenge(None));
    }
}
