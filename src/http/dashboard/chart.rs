//! The weekly chart: the three acceptance rates of a series, one line and
//! one point per week with outputs to rate, drawn as an inline SVG by
//! plotters' SVG backend (no font files: the browser draws the text). A week
//! with nothing evaluable has no point (a rate of nothing is not 0 %).

use plotters::prelude::*;

use crate::http::series::Period;

/// The three series: name, label, colour (`#rrggbb`, as the SVG writes it).
pub const SERIES: [(&str, &str, (u8, u8, u8)); 3] = [
    ("strict", "strict (strong)", (0x1f, 0x77, 0xb4)),
    (
        "human_check",
        "human-check (strong + medium)",
        (0x2c, 0xa0, 0x2c),
    ),
    ("sticky", "sticky (weak or exists-only)", (0xd6, 0x27, 0x28)),
];

const WIDTH: u32 = 640;
const HEIGHT: u32 = 300;

/// The rate of `series` in `p`, in percent.
fn rate(series: &str, p: &Period) -> Option<f64> {
    let r = &p.rates;
    match series {
        "strict" => r.strict_acceptance_rate,
        "human_check" => r.human_check_acceptance_rate,
        _ => r.sticky_artifact_rate,
    }
    .map(|v| v * 100.0)
}

/// `2026-W45` → `W45`, the x-axis label.
fn short_week(p: &Period) -> String {
    p.week.rsplit('-').next().unwrap_or(&p.week).to_string()
}

/// The chart as an `<svg>` element.
pub fn weekly_rates(periods: &[Period]) -> Result<String, String> {
    let mut svg = String::new();
    draw(&mut svg, periods).map_err(|e| format!("drawing the chart: {e}"))?;
    Ok(svg)
}

fn draw<'a>(
    svg: &'a mut String,
    periods: &[Period],
) -> Result<(), Box<dyn std::error::Error + 'a>> {
    let root = SVGBackend::with_string(svg, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let n = periods.len().max(1);
    let mut chart = ChartBuilder::on(&root)
        .margin(12)
        .x_label_area_size(28)
        .y_label_area_size(44)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0f64..100f64)?;
    let label = |x: &f64| {
        let i = x.round();
        if (x - i).abs() > 0.01 || i < 0.0 {
            return String::new();
        }
        periods.get(i as usize).map(short_week).unwrap_or_default()
    };
    chart
        .configure_mesh()
        .x_labels(n)
        .x_label_formatter(&label)
        .y_labels(5)
        .y_label_formatter(&|y| format!("{y:.0}%"))
        .label_style(("sans-serif", 16))
        .max_light_lines(0)
        .draw()?;
    // Larger points first: where two rates are equal, both stay visible.
    for ((name, _, (r, g, b)), radius) in SERIES.into_iter().zip([6, 4, 3]) {
        let colour = RGBColor(r, g, b);
        let points: Vec<(f64, f64)> = periods
            .iter()
            .enumerate()
            .filter_map(|(i, p)| rate(name, p).map(|v| (i as f64, v)))
            .collect();
        chart.draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))?;
        chart.draw_series(
            points
                .iter()
                .map(|p| Circle::new(*p, radius, colour.filled())),
        )?;
    }
    root.present()?;
    Ok(())
}

/// The colour of `series` as the SVG writes it (`#1F77B4`).
pub fn colour_hex(series: &str) -> String {
    SERIES
        .iter()
        .find(|(n, _, _)| *n == series)
        .map(|(_, _, (r, g, b))| format!("#{r:02X}{g:02X}{b:02X}"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::report::TypeStats;

    fn period(week: &str, strict: Option<f64>) -> Period {
        Period {
            week: week.into(),
            period_start: chrono::Utc::now(),
            period_end: chrono::Utc::now(),
            totals: Default::default(),
            rates: TypeStats {
                strict_acceptance_rate: strict,
                human_check_acceptance_rate: strict,
                sticky_artifact_rate: strict.map(|_| 0.1),
                ..TypeStats::default()
            },
        }
    }

    #[test]
    fn one_point_per_rated_week_in_each_series() {
        let periods = [
            period("2026-W44", Some(0.5)),
            period("2026-W45", None),
            period("2026-W46", Some(1.0)),
        ];
        let svg = weekly_rates(&periods).unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        for (name, _, _) in SERIES {
            let fill = format!("fill=\"{}\"", colour_hex(name));
            let points = svg
                .lines()
                .filter(|l| l.contains("<circle") && l.contains(&fill))
                .count();
            assert_eq!(points, 2, "{name}: {svg}");
        }
        assert!(svg.contains("\nW45\n"), "{svg}");
    }
}
