//! The two exposition formats `/metrics` serves, chosen by the scraper's
//! `Accept` (as Prometheus's own client libraries do): OpenMetrics 1.0
//! (`prometheus-client`'s encoding; the default, and what Prometheus asks
//! for first) and the Prometheus text format 0.0.4 (`text/plain`), which
//! older scrapers and `promtool check metrics` read. The 0.0.4 text is
//! derived from the OpenMetrics text: a counter's `HELP` and `TYPE` name
//! the `_total` sample, `unknown` is `untyped`, and `# EOF`/`# UNIT` go.
//! CI lints both with `promtool check metrics` (scripts/real-clients).

/// An exposition format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    OpenMetrics,
    /// The Prometheus text format, version 0.0.4.
    Text,
}

/// The media type of OpenMetrics text.
const OPENMETRICS: &str = "application/openmetrics-text";

impl Format {
    /// The format an `Accept` header asks for: the Prometheus text format
    /// when it prefers `text/plain` to OpenMetrics (a higher `q`, or no
    /// OpenMetrics at all); else, and without the header, OpenMetrics.
    pub(crate) fn negotiate(accept: Option<&str>) -> Format {
        let Some(accept) = accept else {
            return Format::OpenMetrics;
        };
        let (mut openmetrics, mut text) = (None::<f32>, None::<f32>);
        for item in accept.split(',') {
            let mut parts = item.split(';').map(str::trim);
            let media = parts.next().unwrap_or("").to_ascii_lowercase();
            let q = parts
                .filter_map(|p| p.strip_prefix("q="))
                .filter_map(|q| q.parse::<f32>().ok())
                .next()
                .unwrap_or(1.0);
            let best = |slot: &mut Option<f32>| *slot = Some(slot.map_or(q, |s| s.max(q)));
            match media.as_str() {
                OPENMETRICS => best(&mut openmetrics),
                "text/plain" => best(&mut text),
                _ => {}
            }
        }
        match (openmetrics, text) {
            (_, Some(t)) if t > 0.0 && openmetrics.is_none_or(|o| t > o) => Format::Text,
            _ => Format::OpenMetrics,
        }
    }

    /// The `Content-Type` of an answer in this format.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Format::Text => "text/plain; version=0.0.4; charset=utf-8",
        }
    }

    /// The exposition in this format, from its OpenMetrics text.
    pub fn render(self, openmetrics: String) -> String {
        match self {
            Format::OpenMetrics => openmetrics,
            Format::Text => to_text(&openmetrics),
        }
    }
}

/// OpenMetrics text as the Prometheus text format 0.0.4.
fn to_text(openmetrics: &str) -> String {
    let counters: std::collections::BTreeSet<&str> = openmetrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.strip_suffix(" counter"))
        .collect();
    let mut out = String::with_capacity(openmetrics.len());
    for line in openmetrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let meta = ["# HELP ", "# TYPE "]
            .into_iter()
            .find_map(|p| line.strip_prefix(p).map(|rest| (p, rest)));
        match meta {
            Some((prefix, rest)) => {
                let (name, tail) = rest.split_once(' ').unwrap_or((rest, ""));
                let name = match counters.contains(name) {
                    true => format!("{name}_total"),
                    false => name.to_string(),
                };
                let tail = match (prefix, tail) {
                    ("# TYPE ", "unknown") => "untyped".to_string(),
                    // 0.0.4 escapes only `\` and newlines in HELP.
                    ("# HELP ", t) => t.replace("\\\"", "\""),
                    (_, t) => t.to_string(),
                };
                out.push_str(&format!("{prefix}{name} {tail}\n"));
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_asks_for_openmetrics_and_promtool_style_clients_get_text() {
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(Format::negotiate(Some(prometheus)), Format::OpenMetrics);
        assert_eq!(Format::negotiate(None), Format::OpenMetrics);
        assert_eq!(Format::negotiate(Some("*/*")), Format::OpenMetrics);
        assert_eq!(
            Format::negotiate(Some("text/plain;version=0.0.4")),
            Format::Text
        );
        assert_eq!(
            Format::negotiate(Some("application/openmetrics-text;q=0.2, text/plain;q=0.9")),
            Format::Text
        );
        assert_eq!(
            Format::negotiate(Some("text/plain;q=0")),
            Format::OpenMetrics
        );
    }

    #[test]
    fn counters_are_named_by_their_samples_in_the_text_format() {
        let om = "# HELP a_b Things \\\"done\\\".\n# TYPE a_b counter\na_b_total 3\n\
                  # HELP g A gauge.\n# TYPE g gauge\ng{x=\"1\"} 2\n# TYPE u unknown\nu 1\n# EOF\n";
        let text = Format::Text.render(om.to_string());
        assert_eq!(
            text,
            "# HELP a_b_total Things \"done\".\n# TYPE a_b_total counter\na_b_total 3\n\
             # HELP g A gauge.\n# TYPE g gauge\ng{x=\"1\"} 2\n# TYPE u untyped\nu 1\n"
        );
        assert_eq!(Format::OpenMetrics.render(om.to_string()), om);
    }
}
