//! Escaping for what people read: GitHub Markdown (the check run), HTML
//! (pages), terminals (`report`) and URL paths. Every string that came from
//! outside, even one validated at the boundary, goes through one of these
//! before it is rendered, so no input can plant a link, an image, a tag, a
//! mention, a table break or a terminal escape sequence.

use crate::ident::is_hidden_control;

/// Text for a terminal: control characters (ESC, CR, BEL, C0, DEL, C1) and
/// hidden format characters (bidi overrides, zero-width marks) are shown as
/// `\u{…}` instead of acting on the terminal.
pub fn terminal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_hidden_control(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Text for a Markdown code span inside a table cell. Backticks, pipes and
/// line breaks would end the span, the cell or the row, so they become
/// spaces; hidden controls are dropped. A code span renders no link, image,
/// HTML or mention, so the rest is shown literally.
pub fn markdown_code(text: &str) -> String {
    let cleaned: String = text
        .chars()
        .filter(|c| !is_hidden_control(*c) || matches!(c, '\n' | '\r' | '\t'))
        .map(|c| match c {
            '`' | '|' | '\n' | '\r' | '\t' => ' ',
            c => c,
        })
        .collect();
    let trimmed = cleaned.trim();
    if trimmed.is_empty() {
        "` `".to_string()
    } else {
        format!("`{trimmed}`")
    }
}

/// Plain text in Markdown (outside a code span): every ASCII punctuation
/// character is backslash-escaped, so no link, image, emphasis, HTML tag,
/// table break or autolink can form; `@` is followed by a word joiner so
/// GitHub makes no mention of it; line breaks become spaces.
pub fn markdown_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            '@' => out.push_str("@\u{2060}"),
            c if is_hidden_control(c) => {}
            c if c.is_ascii_punctuation() => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// Text for HTML element content or a quoted attribute value.
pub fn html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if is_hidden_control(c) && !matches!(c, '\n' | '\t') => {}
            c => out.push(c),
        }
    }
    out
}

/// A URL path that keeps `/` and `:` and the unreserved characters, and
/// percent-encodes every other byte (so `)`, `]`, spaces, quotes and `<`
/// cannot end a Markdown link or an HTML attribute).
pub fn url_path(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/' | b':') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Markdown text outside code spans, backslash-escaped characters (which
/// GitHub shows literally) left out: what a reader sees rendered as
/// Markdown. The tests of `markdown_text` and of the check run's summary
/// look there for anything a hostile string could plant.
pub fn outside_code(markdown: &str) -> String {
    let text = markdown.split('`').step_by(2).collect::<Vec<_>>().join(" ");
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            chars.next();
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTILE: &[&str] = &[
        "](https://evil)",
        "[x](https://evil.example)",
        "![i](https://evil/i.png)",
        "<img src=x onerror=alert(1)>",
        "\u{1b}[31mred\u{1b}[0m",
        "over\rwrite",
        "@org/team",
        "a|b",
        "``x``",
        "a\u{202E}cba",
        "bell\u{7}",
        "c1\u{9b}31m",
    ];

    #[test]
    fn terminal_shows_controls_instead_of_obeying_them() {
        for h in HOSTILE {
            let t = terminal(h);
            assert!(!t.chars().any(is_hidden_control), "{t:?}");
        }
        assert_eq!(terminal("a\u{1b}[31m"), "a\\u{1b}[31m");
        assert_eq!(terminal("über ok"), "über ok");
    }

    #[test]
    fn code_spans_cannot_be_left() {
        for h in HOSTILE {
            let c = markdown_code(h);
            let inner = &c[1..c.len() - 1];
            assert!(!inner.contains(['`', '|', '\r', '\n']), "{c:?}");
            assert!(!c.chars().any(is_hidden_control), "{c:?}");
        }
        assert_eq!(markdown_code("o/r:1:0"), "`o/r:1:0`");
        assert_eq!(markdown_code("``"), "` `");
    }

    #[test]
    fn markdown_text_escapes_every_punctuation_and_mention() {
        assert_eq!(markdown_text("[x](y)"), "\\[x\\]\\(y\\)");
        assert_eq!(markdown_text("<b>"), "\\<b\\>");
        assert_eq!(markdown_text("@org/team"), "@\u{2060}org\\/team");
        assert_eq!(markdown_text("a\nb|c"), "a b\\|c");
        assert_eq!(markdown_text("x\u{202E}y"), "xy");
    }

    #[test]
    fn html_escapes_markup_and_quotes() {
        assert_eq!(
            html("<img src=\"x\" onerror='y'>&"),
            "&lt;img src=&quot;x&quot; onerror=&#39;y&#39;&gt;&amp;"
        );
    }

    #[test]
    fn url_paths_keep_ids_readable_and_encode_the_rest() {
        assert_eq!(url_path("o/r:1:0"), "o/r:1:0");
        assert_eq!(
            url_path("x) [evil](https://e"),
            "x%29%20%5Bevil%5D%28https://e"
        );
        assert_eq!(url_path("a b"), "a%20b");
    }
}
