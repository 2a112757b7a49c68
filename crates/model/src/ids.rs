//! Identifiers parsed once, where they come in: a repository's name
//! (`RepoName`), the key an object's observations are filed under
//! (`TargetKey`) and an output's id (`OutputId`). Each is checked when made
//! (the `ident` rules), serializes as the plain string it always was (stored
//! records and the API do not change), and answers its parts without the
//! string being split again.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::ident::{self, IdentError};
use super::target::TargetKind;

/// Plain-string behaviour shared by the three: `Deref<Target = str>`,
/// `Borrow<str>` (maps keyed by them answer `&str` lookups), `Display`,
/// comparison with strings, and serde as the string.
macro_rules! string_id {
    ($name:ident) => {
        impl Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                self.as_str()
            }
        }

        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                self.as_str()
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                self.as_str()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                self.as_str() == other
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.into_string()
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        /// Only what `parse` takes: a stored or posted id is checked too.
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                let s = String::deserialize(d)?;
                $name::parse(&s).map_err(serde::de::Error::custom)
            }
        }
    };
}

/// `owner/name`, by GitHub's rules (`ident::repo`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RepoName {
    full: String,
    slash: usize,
}

impl RepoName {
    pub fn parse(value: &str) -> Result<RepoName, IdentError> {
        ident::repo(value)?;
        let slash = value.find('/').expect("ident::repo checked owner/name");
        Ok(RepoName {
            full: value.to_string(),
            slash,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.full
    }

    pub fn owner(&self) -> &str {
        &self.full[..self.slash]
    }

    pub fn name(&self) -> &str {
        &self.full[self.slash + 1..]
    }

    pub fn into_string(self) -> String {
        self.full
    }
}

string_id!(RepoName);

/// The repository (or owner) part of a target key `{repo}#{object}` (the
/// whole string when it names no object): where a key is kept as a string
/// (an `Observation`'s `target`), the one reading of its repository.
pub fn repo_of_key(key: &str) -> &str {
    split_key(key).map_or(key, |(repo, _)| repo)
}

/// A target key's repository (or owner) and object; `None` when it names
/// no object.
pub fn split_key(key: &str) -> Option<(&str, &str)> {
    key.split_once('#')
}

/// An issue or PR key `{repo}#{number}`: its repository and number.
pub fn thread_of_key(key: &str) -> Option<(&str, u64)> {
    let (repo, number) = key.rsplit_once('#')?;
    Some((repo, number.parse().ok()?))
}

/// The key an object's observations are filed under: `{repo}#{object}`
/// (`acme/widgets#7` for issue or PR 7, `acme/widgets#commit:SHA`,
/// `acme/widgets#ref:main`, `acme/widgets#comment:123`, …; `{owner}#…` for
/// an owner's own objects). Made by the constructors below or parsed once
/// (`parse`); `repo()` and `object()` answer without splitting again.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TargetKey {
    key: String,
    hash: usize,
}

impl TargetKey {
    /// A key from outside (a stored key, a key in a request), checked by
    /// `ident`'s rules for its repository or owner.
    pub fn parse(key: &str) -> Result<TargetKey, IdentError> {
        let Some(hash) = key.find('#') else {
            return Err(IdentError::new(
                "key",
                key,
                "names no object after its repository",
            ));
        };
        let repo = &key[..hash];
        if repo.contains('/') {
            ident::repo(repo)?;
        } else {
            ident::owner(repo)?;
        }
        if key[hash + 1..].chars().any(char::is_control) {
            return Err(IdentError::new("key", key, "holds a control character"));
        }
        Ok(TargetKey {
            key: key.to_string(),
            hash,
        })
    }

    /// `{repo}#{object}` from parts already checked (the constructors).
    fn join(repo: &str, object: std::fmt::Arguments<'_>) -> TargetKey {
        let key = format!("{repo}#{object}");
        TargetKey {
            hash: repo.len(),
            key,
        }
    }

    /// An issue or a PR: `{repo}#{number}`.
    pub fn thread(repo: &str, number: u64) -> TargetKey {
        TargetKey::join(repo, format_args!("{number}"))
    }

    /// A commit (its check runs, reverts): `{repo}#commit:{sha}`.
    pub fn commit(repo: &str, sha: &str) -> TargetKey {
        TargetKey::join(repo, format_args!("commit:{sha}"))
    }

    /// A branch: `{repo}#ref:{name}` (`refs/heads/` left out).
    pub fn reference(repo: &str, git_ref: &str) -> TargetKey {
        TargetKey::join(
            repo,
            format_args!("ref:{}", git_ref.trim_start_matches("refs/heads/")),
        )
    }

    /// The repository itself: `{repo}#repo`.
    pub fn repository(repo: &str) -> TargetKey {
        TargetKey::join(repo, format_args!("repo"))
    }

    /// Any object of `kind` by its id, number, node id or name:
    /// `{repo}#{kind}:{id}`.
    pub fn of_kind(repo: &str, kind: TargetKind, id: &str) -> TargetKey {
        TargetKey::join(repo, format_args!("{}:{id}", kind.key_name()))
    }

    pub fn as_str(&self) -> &str {
        &self.key
    }

    /// The repository (or owner) part.
    pub fn repo(&self) -> &str {
        &self.key[..self.hash]
    }

    /// What follows the `#`: `7`, `commit:SHA`, `ref:main`, `comment:123`.
    pub fn object(&self) -> &str {
        &self.key[self.hash + 1..]
    }

    /// The number of an issue or PR key (`{repo}#7`).
    pub fn thread_number(&self) -> Option<u64> {
        let o = self.object();
        (!o.is_empty() && o.bytes().all(|b| b.is_ascii_digit()))
            .then(|| o.parse().ok())
            .flatten()
    }

    /// Keys whose observations are copied to the PRs linked to them (a PR's
    /// head branch, head commit and merge commit).
    pub fn is_linkable(&self) -> bool {
        self.object().starts_with("ref:") || self.object().starts_with("commit:")
    }

    pub fn into_string(self) -> String {
        self.key
    }
}

string_id!(TargetKey);

/// An output's id: `{repo}:{run_id}:{index}`, or the manifest's own id when
/// the line carries one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OutputId(String);

impl OutputId {
    /// The id of the `index`-th output of run `run_id` in `repo`.
    pub fn of_run(repo: &str, run_id: u64, index: usize) -> OutputId {
        OutputId(format!("{repo}:{run_id}:{index}"))
    }

    /// An id from outside (a path, a manifest's own `id`): 1–512 bytes with
    /// no control character.
    pub fn parse(value: &str) -> Result<OutputId, IdentError> {
        if value.is_empty() || value.len() > 512 {
            return Err(IdentError::new(
                "output id",
                value,
                "is empty or longer than 512 bytes",
            ));
        }
        if value.chars().any(char::is_control) {
            return Err(IdentError::new(
                "output id",
                value,
                "holds a control character",
            ));
        }
        Ok(OutputId(value.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `(repo, run_id, index)` when the id has the run's shape.
    pub fn run_parts(&self) -> Option<(&str, u64, usize)> {
        let (rest, index) = self.0.rsplit_once(':')?;
        let (repo, run) = rest.rsplit_once(':')?;
        ident::repo(repo).ok()?;
        Some((repo, run.parse().ok()?, index.parse().ok()?))
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

string_id!(OutputId);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_key_answers_its_parts_as_it_was_made() {
        let k = TargetKey::thread("acme/widgets", 7);
        assert_eq!(
            (k.as_str(), k.repo(), k.object()),
            ("acme/widgets#7", "acme/widgets", "7")
        );
        assert_eq!(k.thread_number(), Some(7));
        let c = TargetKey::commit("acme/widgets", "abc");
        assert!(c.is_linkable() && c.thread_number().is_none());
        assert_eq!(
            TargetKey::reference("o/r", "refs/heads/main").as_str(),
            "o/r#ref:main"
        );
        assert_eq!(
            TargetKey::of_kind("o/r", TargetKind::Comment, "12").as_str(),
            "o/r#comment:12"
        );
        assert_eq!(TargetKey::repository("acme").repo(), "acme");
    }

    #[test]
    fn bad_keys_and_names_are_refused() {
        for bad in ["no-hash", "a b/c#1", "o/r#x\u{0}y", "#7", "o/#1"] {
            assert!(TargetKey::parse(bad).is_err(), "{bad:?}");
        }
        for bad in ["o", "o/", "-o/r", "o/r/s", "o/.."] {
            assert!(RepoName::parse(bad).is_err(), "{bad:?}");
        }
        assert!(OutputId::parse("").is_err());
        assert!(OutputId::parse("a\nb").is_err());
    }

    #[test]
    fn serde_is_the_plain_string_and_checks_on_the_way_in() {
        let k = TargetKey::thread("o/r", 3);
        assert_eq!(serde_json::to_string(&k).unwrap(), "\"o/r#3\"");
        let back: TargetKey = serde_json::from_str("\"o/r#3\"").unwrap();
        assert_eq!(back, k);
        assert!(serde_json::from_str::<TargetKey>("\"o/r\"").is_err());
        let r: RepoName = serde_json::from_str("\"octo/hello\"").unwrap();
        assert_eq!((r.owner(), r.name()), ("octo", "hello"));
        let id = OutputId::of_run("o/r", 12, 3);
        assert_eq!(id.run_parts(), Some(("o/r", 12, 3)));
        assert_eq!(OutputId::parse("aw_abc").unwrap().run_parts(), None);
    }

    proptest! {
        #[test]
        fn parsing_what_a_constructor_made_gives_it_back(
            owner in "[a-z][a-z0-9-]{0,10}",
            name in "[a-z0-9._-]{1,12}",
            n in 1u64..=i64::MAX as u64,
            sha in "[0-9a-f]{7,40}",
            branch in "[a-zA-Z0-9/_.-]{1,30}",
        ) {
            prop_assume!(name != "." && name != "..");
            let repo = format!("{owner}/{name}");
            for k in [
                TargetKey::thread(&repo, n),
                TargetKey::commit(&repo, &sha),
                TargetKey::reference(&repo, &branch),
                TargetKey::of_kind(&repo, TargetKind::Review, &n.to_string()),
                TargetKey::repository(&repo),
            ] {
                let parsed = TargetKey::parse(k.as_str()).unwrap();
                prop_assert_eq!(parsed.repo(), repo.as_str());
                prop_assert_eq!(parsed.object(), k.object());
                prop_assert_eq!(&parsed, &k);
            }
        }
    }
}
