//! The safe-output types as a type: `OutputType` names every gh-aw type with a
//! dedicated evaluator (the rows of `evaluate::registry`, which declares the
//! enum and the rows in one list through `output_types!`), and keeps any other
//! (a custom type) as `Unknown(name)`. It reads and writes as gh-aw's string
//! (`create_issue`), in serde, `Display` and `FromStr`, so the stored records
//! do not change; code matches on variants instead of strings.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::registry::OutputType;

/// Declares the registry (`registry::TYPES`) and the enum from one list:
/// each row is `Variant: spec!(name, family file, evaluator, effect, needs,
/// seed)`, so a type is named once and the enum cannot miss a row.
macro_rules! output_types {
    ($($variant:ident: spec!($name:literal, $family:literal, $eval:path, $effect:ident, $needs:literal, $seed:literal),)*) => {
        /// A safe-output type (gh-aw's item `type`).
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum OutputType {
            $($variant,)*
            /// A type this build has no name for (custom, or newer than us).
            Unknown(String),
        }

        impl OutputType {
            /// Every named type, in the registry's order.
            pub const KNOWN: &[OutputType] = &[$(OutputType::$variant,)*];

            /// gh-aw's name of the type.
            pub fn as_str(&self) -> &str {
                match self {
                    $(OutputType::$variant => $name,)*
                    OutputType::Unknown(name) => name,
                }
            }

            pub(super) fn named(name: &str) -> Option<OutputType> {
                match name {
                    $($name => Some(OutputType::$variant),)*
                    _ => None,
                }
            }
        }

        /// Every type with a dedicated evaluator. Anything else goes to the
        /// generic fallback (`pending/weak/target_exists_only` at best:
        /// existence is never acceptance).
        pub const TYPES: &[TypeSpec] = &[$(
            TypeSpec {
                name: $name,
                family: $family,
                evaluator: $eval,
                effect: Effect::$effect,
                needs: $needs,
                seed: $seed,
            },
        )*];
    };
}
pub(super) use output_types;

impl From<&str> for OutputType {
    fn from(name: &str) -> OutputType {
        OutputType::named(name).unwrap_or_else(|| OutputType::Unknown(name.to_string()))
    }
}

impl FromStr for OutputType {
    type Err = std::convert::Infallible;

    fn from_str(name: &str) -> Result<OutputType, Self::Err> {
        Ok(OutputType::from(name))
    }
}

impl fmt::Display for OutputType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for OutputType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for OutputType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<OutputType, D::Error> {
        let name = String::deserialize(d)?;
        Ok(OutputType::from(name.as_str()))
    }
}

impl PartialEq<str> for OutputType {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registry_type_is_named_and_round_trips() {
        let registry: Vec<&str> = super::super::registry::TYPES
            .iter()
            .map(|t| t.name)
            .collect();
        let known: Vec<&str> = OutputType::KNOWN.iter().map(OutputType::as_str).collect();
        assert_eq!(
            registry, known,
            "the enum and the registry name the same types"
        );
        for t in OutputType::KNOWN {
            let parsed: OutputType = t.to_string().parse().unwrap();
            assert_eq!(&parsed, t);
            assert!(!matches!(parsed, OutputType::Unknown(_)));
        }
    }

    #[test]
    fn an_unknown_type_is_kept_by_name_and_serde_is_the_gh_aw_string() {
        let custom = OutputType::from("post_to_slack");
        assert_eq!(custom, OutputType::Unknown("post_to_slack".into()));
        assert_eq!(custom.to_string(), "post_to_slack");
        assert_eq!(
            serde_json::to_string(&OutputType::CreateIssue).unwrap(),
            "\"create_issue\""
        );
        let back: OutputType = serde_json::from_str("\"add_labels\"").unwrap();
        assert_eq!(back, OutputType::AddLabels);
        let back: OutputType = serde_json::from_str("\"post_to_slack\"").unwrap();
        assert_eq!(back, custom);
        assert!(OutputType::Noop == *"noop");
    }
}
