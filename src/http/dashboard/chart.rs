//! The weekly chart and the sparklines, as inline SVG written here (maud
//! escapes every text). The three acceptance rates of a series at one
//! window are three lines told apart by colour, dash and marker shape (not
//! by red and green; none is red); each has one marker per week with outputs
//! to rate (a rate of nothing is not 0 %: no marker), carrying a `<title>`
//! with the week, the rate and its counts. Under each week: how many
//! outputs it holds. A week whose outputs have not all reached the window
//! is immature: its band is shaded and its markers hollow.
//!
//! The chart is drawn twice, for a wide and a narrow screen (the stylesheet
//! shows one), so its text stays readable at 390 px; each is an `img` with a
//! title and a description for assistive technology.

use maud::{html, Markup};

use crate::http::series::Period;

/// A marker shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Square,
    Triangle,
}

/// One line of the chart.
#[derive(Clone, Copy, Debug)]
pub struct Line {
    /// `strict`, `human_check`, `sticky`.
    pub name: &'static str,
    pub label: &'static str,
    /// The rate's field in a period.
    pub field: &'static str,
    pub colour: &'static str,
    /// `stroke-dasharray` (empty: solid).
    pub dash: &'static str,
    pub marker: Marker,
}

/// The three rates: blue solid circles, orange dashed squares, grey dotted
/// triangles.
pub const SERIES: [Line; 3] = [
    Line {
        name: "strict",
        label: "strict (strong)",
        field: "strict_acceptance_rate",
        colour: "#0550ae",
        dash: "",
        marker: Marker::Circle,
    },
    Line {
        name: "human_check",
        label: "human-check (strong + medium)",
        field: "human_check_acceptance_rate",
        colour: "#bc4c00",
        dash: "7 4",
        marker: Marker::Square,
    },
    Line {
        name: "sticky",
        label: "sticky (weak or exists-only)",
        field: "sticky_artifact_rate",
        colour: "#57606a",
        dash: "2 3",
        marker: Marker::Triangle,
    },
];

/// The rate of `line` in `p`, 0..1.
pub(crate) fn rate(line: &Line, p: &Period) -> Option<f64> {
    let r = &p.rates;
    match line.name {
        "strict" => r.strict_acceptance_rate,
        "human_check" => r.human_check_acceptance_rate,
        _ => r.sticky_artifact_rate,
    }
}

/// `2026-W45` → `W45`, the x-axis label.
fn short_week(p: &Period) -> &str {
    p.week.rsplit('-').next().unwrap_or(&p.week)
}

/// The size of one drawing.
struct Frame {
    id: &'static str,
    width: f64,
    height: f64,
    font: f64,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
}

const WIDE: Frame = Frame {
    id: "wide",
    width: 720.0,
    height: 300.0,
    font: 13.0,
    left: 44.0,
    right: 12.0,
    top: 12.0,
    bottom: 44.0,
};

const NARROW: Frame = Frame {
    id: "narrow",
    width: 360.0,
    height: 260.0,
    font: 12.0,
    left: 38.0,
    right: 8.0,
    top: 10.0,
    bottom: 42.0,
};

/// The weekly chart of `periods` at `window`, both drawings and the legend.
pub(crate) fn weekly(periods: &[Period], window: &str) -> Markup {
    html! {
        (draw(&WIDE, periods, window))
        (draw(&NARROW, periods, window))
        (legend())
    }
}

/// The legend: each line's sample, and what a hollow marker means.
pub(crate) fn legend() -> Markup {
    html! {
        ul.legend {
            @for line in SERIES {
                li {
                    svg viewBox="0 0 34 14" aria-hidden="true" {
                        path d="M1 7H33" stroke=(line.colour) stroke-width="2" fill="none" stroke-dasharray=(line.dash) {}
                        (marker(line.marker, 17.0, 7.0, 4.5, line.colour, true))
                    }
                    (line.label)
                }
            }
            li {
                svg viewBox="0 0 34 14" aria-hidden="true" {
                    rect.immature-band x="0" y="0" width="34" height="14" {}
                    (marker(Marker::Circle, 17.0, 7.0, 4.5, "#0550ae", false))
                }
                "immature week (hollow): some of its outputs have not reached the window yet"
            }
        }
    }
}

fn marker(shape: Marker, x: f64, y: f64, size: f64, colour: &str, filled: bool) -> Markup {
    let fill = if filled { colour } else { "#ffffff" };
    match shape {
        Marker::Circle => html! {
            circle cx=(f(x)) cy=(f(y)) r=(f(size)) fill=(fill) stroke=(colour) stroke-width="2" {}
        },
        Marker::Square => {
            let s = size * 0.85;
            html! {
                rect x=(f(x - s)) y=(f(y - s)) width=(f(2.0 * s)) height=(f(2.0 * s))
                    fill=(fill) stroke=(colour) stroke-width="2" {}
            }
        }
        Marker::Triangle => {
            let s = size * 0.9;
            let points = format!(
                "{},{} {},{} {},{}",
                f(x),
                f(y - s),
                f(x + s),
                f(y + s * 0.8),
                f(x - s),
                f(y + s * 0.8)
            );
            html! { polygon points=(points) fill=(fill) stroke=(colour) stroke-width="2" {} }
        }
    }
}

fn f(v: f64) -> String {
    format!("{v:.1}")
}

fn pct(r: f64) -> String {
    format!("{:.0}%", r * 100.0)
}

/// The words of a week for its markers' titles and the description.
fn week_words(p: &Period, window: &str) -> String {
    let mut s = format!(
        "{}: {} outputs at T+{window}, {} evaluable",
        p.week, p.rates.count, p.rates.evaluable
    );
    if p.immature {
        s.push_str(&format!(
            "; immature, {} not at T+{window} yet",
            p.not_yet_at_window
        ));
    }
    s
}

fn draw(frame: &Frame, periods: &[Period], window: &str) -> Markup {
    let n = periods.len().max(1);
    let plot_w = frame.width - frame.left - frame.right;
    let plot_h = frame.height - frame.top - frame.bottom;
    let step = plot_w / n as f64;
    let x = |i: usize| frame.left + step * (i as f64 + 0.5);
    let y = |r: f64| frame.top + plot_h * (1.0 - r);
    // Label every week while they fit, else every other (or third) one.
    let every = ((frame.font * 2.6) / step).ceil().max(1.0) as usize;
    let title_id = format!("chart-title-{}", frame.id);
    let desc_id = format!("chart-desc-{}", frame.id);
    let rated: Vec<String> = periods
        .iter()
        .filter(|p| p.rates.evaluable > 0)
        .map(|p| {
            let rates: Vec<String> = SERIES
                .iter()
                .filter_map(|l| {
                    rate(l, p).map(|r| format!("{} {}", l.name.replace('_', "-"), pct(r)))
                })
                .collect();
            format!("{}: {}", week_words(p, window), rates.join(", "))
        })
        .collect();
    let description = if rated.is_empty() {
        "No week in the range has outputs to rate.".to_string()
    } else {
        rated.join(". ")
    };
    html! {
        svg.chart.(frame.id) xmlns="http://www.w3.org/2000/svg" role="img"
            viewBox=(format!("0 0 {} {}", frame.width, frame.height))
            aria-labelledby=(format!("{title_id} {desc_id}")) data-weeks=(periods.len()) {
            title id=(title_id) {
                "Acceptance rates per week at T+" (window) ": strict, human-check and sticky"
            }
            desc id=(desc_id) { (description) }
            @for (i, p) in periods.iter().enumerate() {
                @if p.immature {
                    rect.immature-band x=(f(frame.left + step * i as f64)) y=(f(frame.top))
                        width=(f(step)) height=(f(plot_h)) {}
                }
            }
            @for tick in [0.0, 0.25, 0.5, 0.75, 1.0] {
                line.grid x1=(f(frame.left)) x2=(f(frame.width - frame.right)) y1=(f(y(tick))) y2=(f(y(tick))) {}
                text x=(f(frame.left - 4.0)) y=(f(y(tick) + frame.font * 0.35)) font-size=(frame.font)
                    text-anchor="end" { (pct(tick)) }
            }
            line.axis x1=(f(frame.left)) x2=(f(frame.left)) y1=(f(frame.top)) y2=(f(frame.top + plot_h)) {}
            @for (i, p) in periods.iter().enumerate() {
                @if i % every == 0 || i + 1 == periods.len() && every == 1 {
                    text x=(f(x(i))) y=(f(frame.top + plot_h + frame.font + 4.0)) font-size=(frame.font)
                        text-anchor="middle" { (short_week(p)) }
                    text x=(f(x(i))) y=(f(frame.top + plot_h + 2.0 * frame.font + 8.0)) font-size=(frame.font - 1.0)
                        text-anchor="middle" fill="#59636e" data-count=(p.rates.count) {
                        title { (week_words(p, window)) }
                        "n=" (p.rates.count)
                    }
                }
            }
            @for (li, line) in SERIES.iter().enumerate() {
                @let points: Vec<(usize, f64)> = periods.iter().enumerate()
                    .filter_map(|(i, p)| rate(line, p).map(|r| (i, r))).collect();
                @let path = points.iter().enumerate()
                    .map(|(k, (i, r))| format!("{}{} {}", if k == 0 { "M" } else { "L" }, f(x(*i)), f(y(*r))))
                    .collect::<Vec<_>>().join(" ");
                g data-series=(line.name) {
                    @if points.len() > 1 {
                        path d=(path) stroke=(line.colour) stroke-width="2" fill="none" stroke-dasharray=(line.dash) {}
                    }
                    @for (i, r) in &points {
                        @let p = &periods[*i];
                        g.point data-week=(p.week) data-rate=(r) data-immature=(p.immature) {
                            title { (line.label) " " (pct(*r)) " — " (week_words(p, window)) }
                            // Larger markers first: equal rates stay visible.
                            (marker(line.marker, x(*i), y(*r), 6.0 - li as f64 * 1.2, line.colour, !p.immature))
                        }
                    }
                }
            }
        }
    }
}

/// A per-workflow sparkline: the strict rate of each week at `window`.
pub(crate) fn sparkline(periods: &[Period], window: &str) -> Markup {
    let (w, h, pad) = (96.0, 24.0, 3.0);
    let n = periods.len().max(1);
    let step = (w - 2.0 * pad) / (n.max(2) - 1) as f64;
    let line = &SERIES[0];
    let points: Vec<(f64, f64, &Period, f64)> = periods
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            rate(line, p).map(|r| {
                (
                    pad + step * i as f64,
                    pad + (h - 2.0 * pad) * (1.0 - r),
                    p,
                    r,
                )
            })
        })
        .collect();
    let words: Vec<String> = points
        .iter()
        .map(|(_, _, p, r)| {
            format!(
                "{} {}{}",
                short_week(p),
                pct(*r),
                if p.immature { " (immature)" } else { "" }
            )
        })
        .collect();
    let label = if words.is_empty() {
        format!("strict rate per week at T+{window}: no week to rate")
    } else {
        format!("strict rate per week at T+{window}: {}", words.join(", "))
    };
    let path = points
        .iter()
        .enumerate()
        .map(|(k, (x, y, _, _))| format!("{}{} {}", if k == 0 { "M" } else { "L" }, f(*x), f(*y)))
        .collect::<Vec<_>>()
        .join(" ");
    html! {
        svg.spark xmlns="http://www.w3.org/2000/svg" role="img" aria-label=(label)
            viewBox=(format!("0 0 {w} {h}")) data-points=(points.len()) {
            title { (label) }
            line x1="0" x2=(w) y1=(f(h - pad)) y2=(f(h - pad)) stroke="#d0d7de" stroke-width="1" {}
            @if points.len() > 1 {
                path d=(path) stroke=(line.colour) stroke-width="1.5" fill="none" {}
            }
            @for (x, y, p, _) in &points {
                circle cx=(f(*x)) cy=(f(*y)) r="2" stroke=(line.colour) stroke-width="1"
                    fill=(if p.immature { "#ffffff" } else { line.colour }) {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::report::TypeStats;

    fn period(week: &str, strict: Option<f64>, immature: bool) -> Period {
        Period {
            week: week.into(),
            period_start: chrono::Utc::now(),
            period_end: chrono::Utc::now(),
            totals: Default::default(),
            rates: TypeStats {
                count: if strict.is_some() { 4 } else { 0 },
                evaluable: if strict.is_some() { 4 } else { 0 },
                strict_acceptance_rate: strict,
                human_check_acceptance_rate: strict,
                sticky_artifact_rate: strict.map(|_| 0.1),
                ..TypeStats::default()
            },
            not_yet_at_window: u64::from(immature),
            immature,
        }
    }

    #[test]
    fn one_marker_per_rated_week_in_each_series_with_words() {
        let periods = [
            period("2026-W44", Some(0.5), false),
            period("2026-W45", None, false),
            period("2026-W46", Some(1.0), true),
        ];
        let svg = weekly(&periods, "7d").into_string();
        for line in SERIES {
            let group = svg
                .split(&format!("data-series=\"{}\"", line.name))
                .nth(1)
                .unwrap();
            let group = group.split("</g></g>").next().unwrap();
            assert!(svg.contains(line.colour));
            // Two drawings, two rated weeks each.
            let all = svg
                .matches(&format!("data-series=\"{}\"", line.name))
                .count();
            assert_eq!(all, 2, "{}", line.name);
            assert!(group.contains("<title>"), "{group}");
        }
        assert_eq!(svg.matches("class=\"point\"").count(), 2 * 3 * 2);
        assert_eq!(svg.matches("data-immature=\"true\"").count(), 2 * 3);
        assert!(svg.contains(">W45<"), "{svg}");
        assert!(svg.contains("role=\"img\"") && svg.contains("<desc"));
        assert!(svg.contains("immature, 1 not at T+7d yet"), "{svg}");
        assert!(!svg.contains("style="), "{svg}");
        // No red: the colours are blue, orange and grey.
        for red in ["#d62728", "#cf222e", "red"] {
            assert!(!svg.contains(&format!("\"{red}\"")), "{red}");
        }
        let spark = sparkline(&periods, "7d").into_string();
        assert!(spark.contains("data-points=\"2\""), "{spark}");
        assert!(spark.contains("W44 50%, W46 100% (immature)"), "{spark}");
    }
}
