//! Sortable tables without JavaScript: each sortable column's header is a
//! link to the same page with `sort=KEY` (`-KEY` descending; the header of
//! the column in use toggles it and carries `aria-sort`), the page's other
//! parameters kept, and the page answers its rows in that order. The
//! outputs list has its own (`list`, with paging); this serves the
//! workflows table (`/workflows`) and the rates per type (overview, a
//! workflow's page). An unknown key is a 400 page naming it.

use std::cmp::Ordering;

use maud::{html, Markup};

use super::with;
use crate::http::ApiError;

/// The order asked for: a column's key, ascending or not.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sort {
    pub key: String,
    pub descending: bool,
}

/// What a row sorts by in one column: text, or a number (none sorts last
/// either way: a rate of nothing is not 0).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Key {
    Text(String),
    Number(Option<f64>),
}

impl Sort {
    /// `sort=` among `keys` (`-` first for descending); `default` without one.
    pub fn parse(value: Option<&String>, keys: &[&str], default: &str) -> Result<Sort, ApiError> {
        let value = value.map(String::as_str).unwrap_or(default);
        let key = value.trim_start_matches('-');
        if !keys.contains(&key) {
            return Err(ApiError::bad_request(format!(
                "sort {value:?} is not one of {} (- first for descending)",
                keys.join(", ")
            )));
        }
        Ok(Sort {
            key: key.to_string(),
            descending: value.starts_with('-'),
        })
    }

    /// Order `rows` by this column (`key_of(row, key)`), ties by the first
    /// column's text as given (`tie`).
    pub fn apply<T>(
        &self,
        rows: &mut [T],
        key_of: impl Fn(&T, &str) -> Key,
        tie: impl Fn(&T) -> String,
    ) {
        rows.sort_by(|a, b| {
            let by = match (key_of(a, &self.key), key_of(b, &self.key)) {
                (Key::Number(x), Key::Number(y)) => match (x, y) {
                    (Some(x), Some(y)) => {
                        let o = x.partial_cmp(&y).unwrap_or(Ordering::Equal);
                        if self.descending {
                            o.reverse()
                        } else {
                            o
                        }
                    }
                    (Some(_), None) => Ordering::Less,
                    (None, Some(_)) => Ordering::Greater,
                    (None, None) => Ordering::Equal,
                },
                (Key::Text(x), Key::Text(y)) => {
                    let o = x.cmp(&y);
                    if self.descending {
                        o.reverse()
                    } else {
                        o
                    }
                }
                _ => Ordering::Equal,
            };
            by.then_with(|| tie(a).cmp(&tie(b)))
        });
    }

    /// A sortable column's header: a link to `path` with this column's
    /// order (toggled when it is the one in use), back at `#anchor`.
    pub fn header(
        &self,
        path: &str,
        pairs: &[(String, String)],
        anchor: &str,
        key: &str,
        label: &str,
        num: bool,
    ) -> Markup {
        let current = self.key == key;
        let next = if current && !self.descending {
            format!("-{key}")
        } else {
            key.to_string()
        };
        let (mark, aria) = match (current, self.descending) {
            (true, true) => (" ▼", "descending"),
            (true, false) => (" ▲", "ascending"),
            _ => ("", "none"),
        };
        let href = format!(
            "{path}{}#{anchor}",
            super::query(&with(pairs, &["page"], &[("sort", &next)]), &[])
        );
        html! {
            th.num[num] aria-sort=(aria) data-sort=(key) {
                a href=(href) { (label) (mark) }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_sort_both_ways_with_nothing_last_and_ties_by_name() {
        let rows = vec![
            ("b", Some(0.5)),
            ("a", None),
            ("c", Some(0.5)),
            ("d", Some(0.1)),
        ];
        let key = |r: &(&str, Option<f64>), _: &str| Key::Number(r.1);
        let tie = |r: &(&str, Option<f64>)| r.0.to_string();
        let mut up = rows.clone();
        Sort::parse(Some(&"strict".into()), &["strict"], "x")
            .unwrap()
            .apply(&mut up, key, tie);
        assert_eq!(up.iter().map(|r| r.0).collect::<String>(), "dbca");
        let mut down = rows.clone();
        Sort::parse(Some(&"-strict".into()), &["strict"], "x")
            .unwrap()
            .apply(&mut down, key, tie);
        assert_eq!(down.iter().map(|r| r.0).collect::<String>(), "bcda");
    }

    #[test]
    fn an_unknown_key_is_refused_by_name() {
        let e = Sort::parse(Some(&"-nope".into()), &["a", "b"], "a").unwrap_err();
        assert!(
            e.detail.contains("\"-nope\"") && e.detail.contains("a, b"),
            "{}",
            e.detail
        );
        assert_eq!(
            Sort::parse(None, &["a"], "-a").unwrap(),
            Sort {
                key: "a".into(),
                descending: true
            }
        );
    }
}
