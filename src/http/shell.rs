//! The one template of every HTML page (dashboard, sign-in, setup, tokens):
//! the head with the served stylesheet (no inline `<style>` or `style=`, no
//! script: a strict `Content-Security-Policy` blocks nothing), the
//! navigation with who is signed in and a sign-out button, breadcrumbs, and
//! the page.
//!
//! Who is looking (`Viewer`) is read from the request by `http::auth`.
//! The stylesheet and the icon are served by `http::assets`; the
//! stylesheet's link carries a digest of its content, so a new release is
//! never read with an old cached sheet.

use std::sync::LazyLock;

use maud::{html, Markup, DOCTYPE};
use sha2::{Digest, Sha256};

/// The stylesheet's path, with a digest of its content.
static STYLESHEET_PATH: LazyLock<String> = LazyLock::new(|| {
    let digest = hex::encode(Sha256::digest(crate::http::assets::STYLESHEET.as_bytes()));
    format!("{}?v={}", crate::http::assets::DASHBOARD_CSS, &digest[..12])
});

/// Who is looking, as the navigation says it.
#[derive(Clone, Debug, Default)]
pub(crate) enum Viewer {
    /// Nobody (a sign-in page), or not known to the page.
    #[default]
    Nobody,
    /// A bearer token: the API token or an installation token.
    Token { installation: bool },
    /// A session: a GitHub login, or the local link of `demo --serve`.
    Session {
        login: String,
        local: bool,
        csrf: String,
    },
}

/// One step of the breadcrumbs: its label and, but for the last, its link.
pub(crate) type Crumb = (String, Option<String>);

/// A crumb that links.
pub(crate) fn crumb(label: impl Into<String>, href: impl Into<String>) -> Crumb {
    (label.into(), Some(href.into()))
}

/// The page around `content`: `title` (plain text), the way here
/// (`crumbs`, the overview first implied), who is looking.
pub fn document(title: &str, crumbs: &[Crumb], viewer: &Viewer, content: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                link rel="icon" href=(crate::http::assets::ICON_SVG) type="image/svg+xml";
                link rel="stylesheet" href=(STYLESHEET_PATH.as_str());
                title { (title) " · safe-outcomes" }
            }
            body {
                a.skip href="#main" { "Skip to the main content" }
                header.top {
                    nav aria-label="Main" {
                        a.brand href="/" { "safe-outcomes" }
                        a href="/" { "Overview" }
                        a href="/workflows" { "Workflows" }
                        a href="/outputs" { "Outputs" }
                    }
                    (who(viewer))
                }
                @if !crumbs.is_empty() {
                    nav.crumbs aria-label="Breadcrumb" {
                        ol {
                            li { a href="/" { "Overview" } }
                            @for (label, href) in crumbs {
                                li {
                                    @match href {
                                        Some(h) => a href=(h) { (label) },
                                        None => span aria-current="page" { (label) },
                                    }
                                }
                            }
                        }
                    }
                }
                main #main tabindex="-1" { (content) }
            }
        }
    }
}

/// Who is signed in, and the way out.
fn who(viewer: &Viewer) -> Markup {
    html! {
        div.who {
            @match viewer {
                Viewer::Nobody => {}
                Viewer::Token { installation } => {
                    span { "Reading with " (if *installation { "an installation token" } else { "the API token" }) }
                }
                Viewer::Session { login, local, csrf } => {
                    span {
                        "Signed in "
                        @if *local { "with the local link" } @else { "as " b { (login) } }
                    }
                    form.inline method="post" action="/auth/logout" {
                        input type="hidden" name="csrf" value=(csrf);
                        button.link type="submit" { "Sign out" }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_carry_no_inline_style_or_script() {
        let page = document(
            "t<x>",
            &[crumb("a\"b", "/x"), ("last".into(), None)],
            &Viewer::Session {
                login: "<mona>".into(),
                local: false,
                csrf: "c".into(),
            },
            html! { p { "hi" } },
        )
        .into_string();
        for inline in ["<style", "style=", "<script", "data:"] {
            assert!(!page.contains(inline), "{inline}: {page}");
        }
        assert!(
            page.contains("&lt;mona&gt;") && page.contains("t&lt;x&gt;"),
            "{page}"
        );
        assert!(page.contains(STYLESHEET_PATH.as_str()));
    }
}
