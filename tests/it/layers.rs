//! The layers, two ways (docs/architecture.md, "Crates, rooms and layers").
//! Between crates the compiler keeps them (a crate names only what its
//! `Cargo.toml` depends on); `the_crates_depend_only_on_the_crates_below_them`
//! fails if a crate gains a dependency on one above it. Inside the App crate,
//! the rooms of `src/` and their directions: `src/` holds only `lib.rs`,
//! `main.rs` and the rooms in `ROOMS`,
//! each a folder whose `mod.rs` opens with a doc saying what it owns and what
//! it may import, and a room imports only the rooms below it. The test reads
//! every `crate::NAME` path in the non-test code of each room (test modules
//! may reach up: a test of the worker starts an `App`) and fails naming the
//! rooms and the files behind each edge that points up or closes a cycle.

mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::{Path, PathBuf};

    use crate::source::production_code;

    type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

    /// The top-level modules: `src/NAME.rs` and `src/NAME/`.
    fn top_modules(src: &Path) -> BTreeSet<String> {
        let mut mods = BTreeSet::new();
        for entry in std::fs::read_dir(src).unwrap() {
            let path = entry.unwrap().path();
            let stem = path.file_stem().unwrap().to_string_lossy().to_string();
            let module = path.is_dir() || path.extension().is_some_and(|e| e == "rs");
            if module && stem != "lib" && stem != "main" {
                mods.insert(stem);
            }
        }
        mods
    }

    /// The rooms of `src/` and the imports between them (`crate::NAME`).
    fn graph(src: &Path) -> Graph {
        room_graph(src, "crate::")
    }

    /// Strongly connected components with more than one module (Tarjan).
    fn cycles(g: &Graph) -> Vec<Vec<String>> {
        struct T<'a> {
            g: &'a Graph,
            index: BTreeMap<&'a str, usize>,
            low: BTreeMap<&'a str, usize>,
            stack: Vec<&'a str>,
            found: Vec<Vec<String>>,
        }
        fn visit<'a>(t: &mut T<'a>, v: &'a str) {
            let n = t.index.len();
            t.index.insert(v, n);
            t.low.insert(v, n);
            t.stack.push(v);
            for w in t.g.get(v).into_iter().flat_map(|e| e.keys()) {
                if !t.index.contains_key(w.as_str()) {
                    visit(t, w);
                    let lw = t.low[w.as_str()];
                    let lv = t.low.get_mut(v).unwrap();
                    *lv = (*lv).min(lw);
                } else if t.stack.contains(&w.as_str()) {
                    let iw = t.index[w.as_str()];
                    let lv = t.low.get_mut(v).unwrap();
                    *lv = (*lv).min(iw);
                }
            }
            if t.low[v] == t.index[v] {
                let mut scc = Vec::new();
                while let Some(w) = t.stack.pop() {
                    scc.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if scc.len() > 1 {
                    scc.sort();
                    t.found.push(scc);
                }
            }
        }
        let mut t = T {
            g,
            index: BTreeMap::new(),
            low: BTreeMap::new(),
            stack: Vec::new(),
            found: Vec::new(),
        };
        for v in g.keys() {
            if !t.index.contains_key(v.as_str()) {
                visit(&mut t, v);
            }
        }
        t.found
    }

    fn explain(g: &Graph, scc: &[String]) -> String {
        let mut out = format!("cycle among {scc:?}:\n");
        for a in scc {
            for (b, files) in g.get(a).into_iter().flatten() {
                if scc.contains(b) {
                    out.push_str(&format!("  {a} -> {b} ({files:?})\n"));
                }
            }
        }
        out
    }

    /// The graph of one room's own modules (its files and folders): an edge
    /// for each `{prefix}NAME` path, and each `super::NAME` in a file right
    /// under the room, naming another of them, outside test code.
    fn room_graph(room: &Path, prefix: &str) -> Graph {
        let mut mods = top_modules(room);
        mods.remove("mod");
        let mut g = Graph::new();
        for (file, text) in production_code(room) {
            let rel = file.strip_prefix(room).unwrap();
            let name = |c: &std::ffi::OsStr| {
                let c = c.to_string_lossy();
                c.strip_suffix(".rs").unwrap_or(&c).to_string()
            };
            let from = name(rel.iter().next().unwrap());
            if !mods.contains(&from) || from.ends_with("tests") {
                continue;
            }
            let direct = rel.iter().count() == 1;
            let mut edge = |to: String| {
                if to != from && mods.contains(&to) {
                    g.entry(from.clone())
                        .or_default()
                        .entry(to)
                        .or_default()
                        .insert(rel.display().to_string());
                }
            };
            let after = |i: usize, len: usize| -> String {
                text[i + len..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect()
            };
            for (i, _) in text.match_indices(prefix) {
                edge(after(i, prefix.len()));
            }
            if direct {
                for (i, _) in text.match_indices("super::") {
                    edge(after(i, "super::".len()));
                }
            }
        }
        g
    }

    /// No circle inside a room: within each room of the App and each
    /// crate, its modules import one another in one direction.
    #[test]
    fn no_room_has_an_import_circle_inside() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut found = Vec::new();
        for room in ROOMS {
            let g = room_graph(&root.join("src").join(room), &format!("crate::{room}::"));
            for c in cycles(&g) {
                found.push(format!("in `{room}`: {}", explain(&g, &c)));
            }
        }
        for (_, dir) in CRATES.iter().filter(|(_, d)| *d != ".") {
            let g = room_graph(&root.join(dir).join("src"), "crate::");
            for c in cycles(&g) {
                found.push(format!("in `{dir}`: {}", explain(&g, &c)));
            }
        }
        assert!(found.is_empty(), "{}", found.join("\n"));
        // The check sees a circle.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "use super::b::B;\n").unwrap();
        std::fs::write(dir.path().join("b.rs"), "use crate::r::a::A;\n").unwrap();
        let g = room_graph(dir.path(), "crate::r::");
        assert_eq!(cycles(&g), vec![vec!["a".to_string(), "b".to_string()]]);
    }

    /// The rooms, bottom to top: each may import only the rooms before it.
    const ROOMS: &[&str] = &[
        "settings", "ingest", "judge", "github", "read", "app", "http", "bench", "cli",
    ];

    /// The workspace's crates, bottom to top: each may depend (normal or
    /// dev) only on the crates before it.
    const CRATES: &[(&str, &str)] = &[
        ("safe-outcomes-model", "crates/model"),
        ("safe-outcomes-judge", "crates/judge"),
        ("safe-outcomes-store", "crates/store"),
        ("safe-outcomes", "."),
    ];

    /// The workspace crates a manifest names in any dependency table.
    fn workspace_dependencies(manifest: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let mut in_deps = false;
        for line in manifest.lines() {
            let t = line.trim();
            if t.starts_with('[') {
                in_deps = t.ends_with("dependencies]") && !t.starts_with("[workspace");
                continue;
            }
            let name: String = t
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            if in_deps && CRATES.iter().any(|(c, _)| *c == name) {
                out.insert(name);
            }
        }
        out
    }

    #[test]
    fn the_crates_depend_only_on_the_crates_below_them() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let workspace = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
        let mut wrong = Vec::new();
        for (rank, (name, dir)) in CRATES.iter().enumerate() {
            assert!(
                workspace.contains(&format!("\"{dir}\"")) || *dir == ".",
                "{dir} is not a member of the workspace"
            );
            let manifest = std::fs::read_to_string(root.join(dir).join("Cargo.toml")).unwrap();
            assert!(
                manifest.contains(&format!("name = \"{name}\"")),
                "{dir}: not {name}"
            );
            for dep in workspace_dependencies(&manifest) {
                let below = CRATES[..rank].iter().any(|(c, _)| *c == dep);
                if !below {
                    wrong.push(format!("{name} depends on {dep}, which is not below it"));
                }
            }
        }
        // Every member is in the list.
        for entry in std::fs::read_dir(root.join("crates")).unwrap() {
            let path = entry.unwrap().path();
            if path.join("Cargo.toml").exists() {
                let dir = format!("crates/{}", path.file_name().unwrap().to_string_lossy());
                assert!(
                    CRATES.iter().any(|(_, d)| *d == dir),
                    "{dir} is not in CRATES"
                );
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
        // The check sees an upward dependency.
        let judge_on_store = "[dependencies]\nsafe-outcomes-store.workspace = true\n";
        assert!(workspace_dependencies(judge_on_store).contains("safe-outcomes-store"));
        assert!(
            workspace_dependencies("[workspace.dependencies]\nsafe-outcomes-store = {}\n")
                .is_empty()
        );
    }

    fn src() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
    }

    /// The edges that point up (or sideways to a room of the same rank,
    /// which cannot happen: ranks are distinct), with their files.
    fn upward(g: &Graph) -> Vec<String> {
        let rank = |r: &str| ROOMS.iter().position(|x| *x == r);
        let mut out = Vec::new();
        for (from, edges) in g {
            for (to, files) in edges {
                match (rank(from), rank(to)) {
                    (Some(a), Some(b)) if b < a => {}
                    _ => out.push(format!("{from} -> {to} ({files:?})")),
                }
            }
        }
        out
    }

    #[test]
    fn rooms_import_only_the_rooms_below_them() {
        let g = graph(&src());
        assert!(g.contains_key("app") && g["app"].contains_key("github"));
        let up = upward(&g);
        assert!(
            up.is_empty(),
            "imports against the rooms' order {ROOMS:?}:\n{}",
            up.join("\n")
        );
        let found = cycles(&g);
        let report: Vec<String> = found.iter().map(|c| explain(&g, c)).collect();
        assert!(found.is_empty(), "{}", report.join("\n"));
    }

    #[test]
    fn src_holds_only_the_rooms_each_a_folder_with_its_doc() {
        let mut loose = Vec::new();
        for entry in std::fs::read_dir(src()).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                if !ROOMS.contains(&name.as_str()) {
                    loose.push(format!("{name}/ is not a room of ROOMS"));
                    continue;
                }
                let doc = std::fs::read_to_string(path.join("mod.rs")).unwrap_or_default();
                if !doc.starts_with("//!") || !doc.contains("May import") {
                    loose.push(format!("{name}/mod.rs must open with a doc naming what it owns and what it may import"));
                }
            } else if name != "lib.rs" && name != "main.rs" {
                loose.push(format!("{name} is a loose file"));
            }
        }
        let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
        for room in ROOMS {
            if !lib.contains(&format!("| `{room}` |")) {
                loose.push(format!("lib.rs's map does not name `{room}`"));
            }
        }
        assert!(loose.is_empty(), "{}", loose.join("\n"));
    }

    #[test]
    fn the_check_sees_an_upward_import() {
        let mut g = Graph::new();
        g.entry("ingest".into())
            .or_default()
            .entry("http".into())
            .or_default()
            .insert("ingest/x.rs".into());
        assert_eq!(upward(&g).len(), 1);
        g.clear();
        g.entry("http".into())
            .or_default()
            .entry("ingest".into())
            .or_default()
            .insert("http/x.rs".into());
        assert!(upward(&g).is_empty());
    }

    #[test]
    fn the_check_sees_a_cycle() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path();
        std::fs::write(src.join("lib.rs"), "pub mod a;\npub mod b;\n").unwrap();
        std::fs::write(src.join("a.rs"), "use crate::b::B;\n").unwrap();
        std::fs::create_dir(src.join("b")).unwrap();
        std::fs::write(
            src.join("b/mod.rs"),
            "pub struct B(crate::a::A);\n#[cfg(test)]\nmod tests;\n",
        )
        .unwrap();
        // Test-only code may reach up without making a cycle.
        std::fs::write(src.join("b/tests.rs"), "use crate::c::C;\n").unwrap();
        std::fs::write(
            src.join("c.rs"),
            "use crate::a::A;\n#[cfg(test)]\nmod tests {\n    use crate::b::B;\n}\n",
        )
        .unwrap();
        let g = graph(src);
        assert_eq!(cycles(&g), vec![vec!["a".to_string(), "b".to_string()]]);
        assert!(!g["b"].contains_key("c"), "{g:?}");
        assert!(!g["c"].contains_key("b"), "{g:?}");
    }
}
