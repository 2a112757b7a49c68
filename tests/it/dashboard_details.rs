//! The dashboard's details (issue 49, item 9), over the demo scenario.
//!
//! Through the real router: the workflows table and the rates per type sort
//! by their column headers (plain links, no script), both ways, a bad key a
//! 400 page; "rejected" reads the same in every table (count · share of the
//! evaluable); the workflows' trend gives no change computed on a handful
//! of outputs; the "Existence only" box holds only the existence-only
//! count; every page opens with a skip link to its main content.
//!
//! In headless Chromium: the skip link is the first tab stop and moves the
//! focus to the content; at 1280 px no id breaks inside a name or number;
//! the window menu shows its whole text; the overview at 390 px is short
//! (its secondary tables folded).

use maud::html;
use serde_json::Value;

use crate::answers;
use crate::browser::Browser;
use crate::common::{self, TestApp};

async fn html_of(t: &TestApp, path: &str) -> (u16, String) {
    let req = reqwest::Client::new().get(format!("{}{path}", t.server.url()));
    let r = answers::bearer(req, Some(common::TOKEN))
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

/// The `data-*` attribute `name` of each `<tr>` of table `#id`, in order.
fn row_keys(html: &str, id: &str, name: &str) -> Vec<String> {
    let table = html
        .split(&format!("id=\"{id}\""))
        .nth(1)
        .unwrap_or_else(|| panic!("no table #{id}"));
    let table = table.split("</table>").next().unwrap();
    attribute_values(table, &format!("<tr {name}=\""))
}

/// The values that follow each `prefix` (which ends in `="`), in order.
fn attribute_values(text: &str, prefix: &str) -> Vec<String> {
    text.split(prefix)
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap().to_string())
        .collect()
}

/// `html` with its tags dropped.
fn text_of(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// The text of every `<td>` whose `data-field` is `field`.
fn cells(html: &str, field: &str) -> Vec<String> {
    html.split(&format!("<td class=\"num\" data-field=\"{field}\""))
        .skip(1)
        .map(|rest| {
            let inner = &rest[rest.find('>').unwrap() + 1..];
            text_of(&inner[..inner.find("</td>").unwrap()])
        })
        .collect()
}

/// "3 · 23%" or "0 · –".
fn count_and_share(cell: &str) -> bool {
    let Some((n, share)) = cell.split_once(" · ") else {
        return false;
    };
    n.parse::<u64>().is_ok()
        && (share == "–"
            || share
                .strip_suffix('%')
                .is_some_and(|p| p.parse::<u64>().is_ok()))
}

/// Rows of `api` (name → stats) ordered by `field`, descending, nulls last,
/// ties by name.
fn expected_order(api: &Value, field: &str) -> Vec<String> {
    let mut rows: Vec<(String, Option<f64>)> = api
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v[field].as_f64()))
        .collect();
    rows.sort_by(|a, b| match (a.1, b.1) {
        (Some(x), Some(y)) => y.partial_cmp(&x).unwrap().then(a.0.cmp(&b.0)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.0.cmp(&b.0),
    });
    rows.into_iter().map(|r| r.0).collect()
}

#[tokio::test]
async fn tables_sort_rejected_reads_alike_trends_need_outputs_and_pages_skip_to_content() {
    let (_dir, t) = TestApp::fresh_demo().await;
    let report = t.get("/api/v1/report").await.body;

    // Sortable tables: the header links, both ways.
    let (status, html) = html_of(&t, "/workflows").await;
    assert_eq!(status, 200);
    let by_name = row_keys(&html, "workflows", "data-workflow");
    let mut sorted = by_name.clone();
    sorted.sort();
    assert_eq!(by_name, sorted, "by name by default");
    assert!(
        html.contains("href=\"/workflows?sort=strict#workflows\""),
        "the strict column's header is a link"
    );
    let (_, html) = html_of(&t, "/workflows?sort=-strict").await;
    let by_workflow: Value = report["by_workflow"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| *k != "(none)")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect::<serde_json::Map<_, _>>()
        .into();
    let mut want = expected_order(&by_workflow, "strict_acceptance_rate");
    let got = row_keys(&html, "workflows", "data-workflow");
    got.iter()
        .for_each(|w| assert!(want.contains(w) || w == "(none)", "{w}"));
    want.retain(|w| got.contains(w));
    assert_eq!(
        got.iter()
            .filter(|w| *w != "(none)")
            .cloned()
            .collect::<Vec<_>>(),
        want,
        "strict, best first"
    );
    assert!(html.contains("aria-sort=\"descending\" data-sort=\"strict\""));
    assert!(
        html.contains("href=\"/workflows?sort=strict#workflows\""),
        "the column in use toggles"
    );
    // The rates per type, on the overview: opened when sorted.
    let (_, html) = html_of(&t, "/?sort=-rejected").await;
    assert!(html.contains("<details class=\"more\" id=\"by-type-section\" open"));
    assert_eq!(
        row_keys(&html, "by-type", "data-type"),
        expected_order(&report["by_type"], "rejection_rate"),
    );
    for bad in [
        "/workflows?sort=size",
        "/?sort=-workflow",
        "/workflows/ci-coach?sort=x",
    ] {
        let (status, html) = html_of(&t, bad).await;
        assert_eq!(status, 400, "{bad}");
        assert!(html.contains("sort"), "{bad}: the page names the parameter");
    }

    // "rejected": count · share, on every page that shows it.
    for path in ["/", "/workflows", "/workflows/ci-coach"] {
        let (_, html) = html_of(&t, path).await;
        let cells = cells(&html, "rejected");
        assert!(!cells.is_empty(), "{path}");
        for c in &cells {
            assert!(count_and_share(c), "{path}: rejected reads {c:?}");
        }
        assert!(!html.contains("data-field=\"rejection_rate\""), "{path}");
    }
    let (_, html) = html_of(&t, "/").await;
    let rejected = report["totals"]["rejected"].as_u64().unwrap();
    let evaluable = report["totals"]["evaluable_outputs"].as_u64().unwrap();
    let card = format!(
        "{}% of evaluable",
        (rejected as f64 * 100.0 / evaluable as f64).round()
    );
    assert!(html.contains(&card), "the rejected card says {card}");

    // No change computed on a handful of outputs: every trend of the demo
    // (a few outputs a week) is "too few", never a number of points.
    let (_, html) = html_of(&t, "/workflows").await;
    assert!(!html.contains(" pts"), "no points on so few outputs");
    let kinds = attribute_values(&html, "data-trend=\"");
    assert!(kinds.iter().any(|k| k == "few"), "{kinds:?}");
    assert!(
        kinds.iter().all(|k| k == "few" || k == "steady"),
        "{kinds:?}"
    );

    // The existence-only box holds only the existence-only count.
    let (_, html) = html_of(&t, "/").await;
    let apart = html.split("id=\"apart\"").nth(1).unwrap();
    let apart = &apart[..apart.find("</section>").unwrap()];
    assert!(apart.contains("data-field=\"fallback_exists_only_count\""));
    assert_eq!(apart.matches("data-field=").count(), 1, "{apart}");
    let also = html.split("id=\"also\"").nth(1).unwrap();
    assert!(also[..also.find("</section>").unwrap()].contains("accepted, then reverted"));

    // Every page opens with a skip link to its main content.
    for path in [
        "/",
        "/workflows",
        "/workflows/ci-coach",
        "/runs/acme/widgets/5101",
        "/outputs",
        "/outputs/acme/widgets:2106:0",
        "/prs/acme/widgets/66",
    ] {
        let (_, html) = html_of(&t, path).await;
        let body = html.split("<body>").nth(1).unwrap();
        assert!(
            body.starts_with("<a class=\"skip\" href=\"#main\">"),
            "{path}: {}",
            &body[..80.min(body.len())]
        );
        assert!(
            html.contains("<main id=\"main\" tabindex=\"-1\">"),
            "{path}"
        );
    }
    // Ids wrap only after their separators: each piece kept whole.
    let (_, html) = html_of(&t, "/outputs?status=rejected").await;
    let piece = html! { span.id { span.seg { "acme/" } wbr; span.seg { "widgets:" } wbr; span.seg { "2106:" } wbr; span.seg { "0" } wbr; } };
    assert!(html.contains(&piece.into_string()), "the id in pieces");
    t.stop().await;
}

#[tokio::test]
async fn in_chromium_skip_link_whole_ids_whole_window_menu_and_a_short_overview_at_390() {
    let Some((browser, _dir, t)) = Browser::on_demo().await else {
        return;
    };
    let url = t.server.url();

    // The skip link: the first tab stop, shown when focused; it moves the
    // focus to the content, whose first link is then the next stop.
    browser.width(1280).await;
    browser.open(&format!("{url}/")).await;
    browser.press("\u{E004}").await; // Tab
    let focused = browser
        .js("const a = document.activeElement, r = a.getBoundingClientRect(); return [a.className, a.getAttribute('href'), r.left >= 0 && r.top >= 0 && r.width > 0]")
        .await;
    assert_eq!(focused, serde_json::json!(["skip", "#main", true]));
    browser.press("\u{E007}").await; // Enter
    let inside = browser
        .js("return document.activeElement.id === 'main' || !!document.activeElement.closest('main')")
        .await;
    assert_eq!(inside, true, "the focus is in the content");

    for width in [1280u32, 390] {
        browser.width(width).await;
        // No id broken inside a name or a number at 1280 px (each piece on
        // one line), on every page that lists ids.
        if width == 1280 {
            for path in [
                "/outputs",
                "/runs/acme/widgets/5101",
                "/prs/acme/widgets/66",
            ] {
                browser.open(&format!("{url}{path}")).await;
                let broken = browser
                    .js("return [...document.querySelectorAll('td .seg')].filter(s => s.getClientRects().length > 1).map(s => s.textContent)")
                    .await;
                let pieces = browser
                    .js("return document.querySelectorAll('.id .seg').length")
                    .await;
                assert!(pieces.as_u64().unwrap() > 0, "{path}");
                assert_eq!(broken, serde_json::json!([]), "{path} at {width}");
                if let Some(wide) = browser.too_wide().await {
                    panic!("{path} at {width} px scrolls sideways: {wide}");
                }
            }
        }
        // The window menu shows its whole text, inside the page.
        for path in ["/", "/workflows", "/workflows/ci-coach"] {
            browser.open(&format!("{url}{path}")).await;
            let menu = browser
                .js("const s = document.querySelector('select[name=window]'), c = document.createElement('canvas').getContext('2d'), cs = getComputedStyle(s);
                     c.font = cs.font; const text = c.measureText(s.options[s.selectedIndex].text).width;
                     const inner = s.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
                     return [text, inner, s.getBoundingClientRect().right, document.documentElement.clientWidth]")
                .await;
            let m: Vec<f64> = menu
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            // Room for the text and the menu's arrow (about 20 px).
            assert!(
                m[0] + 16.0 <= m[1],
                "{path} at {width}: the menu cuts its text: {menu}"
            );
            assert!(
                m[2] <= m[3],
                "{path} at {width}: the menu runs off the page: {menu}"
            );
        }
    }
    // The overview at 390 px: short, its secondary tables folded.
    browser.width(390).await;
    browser.open(&format!("{url}/")).await;
    let height = browser
        .js("return document.documentElement.scrollHeight")
        .await
        .as_u64()
        .unwrap();
    eprintln!("the overview at 390 px: {height} px tall");
    assert!(height < 3_000, "the overview at 390 px is {height} px tall");
    let folded = browser
        .js("return [...document.querySelectorAll('details.more')].map(d => [d.id, d.open])")
        .await;
    assert_eq!(
        folded,
        serde_json::json!([["weekly-section", false], ["by-type-section", false]])
    );
    // Opened, a folded table shows its rows.
    browser.click("#by-type-section > summary").await;
    let shown = browser
        .js("return document.querySelector('#by-type tbody tr').getBoundingClientRect().height > 0")
        .await;
    assert_eq!(shown, true);
    browser.screenshot("details-overview-390.png").await;
    browser.quit().await;
    t.stop().await;
}
