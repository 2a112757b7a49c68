//! The one table every bench scenario prints: figure, ours, baseline, ratio,
//! target, and whether the target is met; then `bench: N of M targets met`.

/// One line of a bench table.
#[derive(Debug, Clone, Default)]
pub struct Row {
    pub figure: String,
    pub ours: String,
    pub baseline: String,
    pub ratio: String,
    pub target: String,
    /// `None` for rows that only inform.
    pub met: Option<bool>,
}

impl Row {
    pub fn new(figure: impl Into<String>, ours: impl Into<String>) -> Row {
        Row {
            figure: figure.into(),
            ours: ours.into(),
            baseline: "—".into(),
            ratio: "—".into(),
            target: "—".into(),
            met: None,
        }
    }

    pub fn baseline(mut self, baseline: impl Into<String>, ratio: Option<f64>) -> Row {
        self.baseline = baseline.into();
        self.ratio = ratio.map_or("—".into(), |r| format!("{r:.2}×"));
        self
    }

    pub fn target(mut self, target: impl Into<String>, met: bool) -> Row {
        self.target = target.into();
        self.met = Some(met);
        self
    }
}

/// A titled table of rows.
#[derive(Debug, Clone)]
pub struct Table {
    pub title: String,
    pub rows: Vec<Row>,
    pub notes: Vec<String>,
}

impl Table {
    pub fn new(title: impl Into<String>) -> Table {
        Table {
            title: title.into(),
            rows: Vec::new(),
            notes: Vec::new(),
        }
    }

    pub fn push(&mut self, row: Row) {
        self.rows.push(row);
    }

    pub fn targets(&self) -> (usize, usize) {
        let judged: Vec<bool> = self.rows.iter().filter_map(|r| r.met).collect();
        (judged.iter().filter(|m| **m).count(), judged.len())
    }

    /// A Markdown table (readable in a terminal, pasteable into BENCHMARKS.md).
    pub fn render(&self) -> String {
        let header = ["figure", "ours", "baseline", "ratio", "target", "met"];
        let cells: Vec<[String; 6]> = self
            .rows
            .iter()
            .map(|r| {
                [
                    r.figure.clone(),
                    r.ours.clone(),
                    r.baseline.clone(),
                    r.ratio.clone(),
                    r.target.clone(),
                    match r.met {
                        Some(true) => "yes".into(),
                        Some(false) => "NO".into(),
                        None => "".into(),
                    },
                ]
            })
            .collect();
        let mut widths = header.map(|h| h.chars().count());
        for row in &cells {
            for (w, c) in widths.iter_mut().zip(row) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |cols: &[String]| {
            let padded: Vec<String> = cols
                .iter()
                .zip(widths)
                .map(|(c, w)| format!("{c}{}", " ".repeat(w - c.chars().count())))
                .collect();
            format!("| {} |\n", padded.join(" | "))
        };
        let mut out = format!("## {}\n\n", self.title);
        out.push_str(&line(&header.map(String::from)));
        out.push_str(&line(&widths.map(|w| "-".repeat(w))));
        for row in &cells {
            out.push_str(&line(row));
        }
        for note in &self.notes {
            out.push_str(&format!("\n{note}"));
        }
        let (met, of) = self.targets();
        out.push_str(&format!("\nbench: {met} of {of} targets met\n"));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_rows_with_a_target() {
        let mut t = Table::new("x");
        t.push(Row::new("a", "1").target("≥ 1", true));
        t.push(Row::new("b", "2").target("≤ 1", false));
        t.push(Row::new("c", "3"));
        assert_eq!(t.targets(), (1, 2));
        let text = t.render();
        assert!(text.ends_with("bench: 1 of 2 targets met\n"), "{text}");
        assert!(text.contains("| NO"), "{text}");
    }
}
