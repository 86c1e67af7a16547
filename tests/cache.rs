//! The warm cache (docs/cache.md): whatever sequence of edits a project goes
//! through, a run that reads the cache prints exactly what a run without it
//! prints, and a warm run reads what an earlier run kept.

use std::path::Path;

use assert_cmd::Command;
use proptest::prelude::*;

/// One model's shape; every field is something an edit flips.
#[derive(Debug, Clone)]
struct Model {
    present: bool,
    star: bool,
    renamed: bool,
    grain: &'static str,
    days: u32,
    filtered: bool,
    /// Calls the project's macro.
    cents: bool,
    /// Calls a macro no package defines (a placeholder for every model).
    unknown: bool,
    /// `{{ config(enabled=false) }}` in its own file.
    disabled: bool,
    /// A custom schema in its YAML.
    schema: bool,
    /// A comment line above everything: the reads move a line down.
    noted: bool,
    /// What it reads: 0 the model before it (the source for the first),
    /// 1 the source, 2 a model that does not exist (an unknown ref).
    from: u8,
}

/// The project: a source, a chain of models, the source's declared columns
/// and the dialect.
#[derive(Debug, Clone)]
struct State {
    models: Vec<Model>,
    source_has_kind: bool,
    dialect: &'static str,
    /// Which body the project's macro has.
    macro_divides: bool,
}

const MODELS: usize = 5;

impl State {
    fn new() -> State {
        State {
            models: (0..MODELS)
                .map(|i| Model {
                    present: true,
                    star: i % 2 == 1,
                    renamed: false,
                    grain: "day",
                    days: 7,
                    filtered: i % 3 == 0,
                    cents: i == 2,
                    unknown: false,
                    disabled: false,
                    schema: false,
                    noted: false,
                    from: 0,
                })
                .collect(),
            source_has_kind: true,
            dialect: "postgres",
            macro_divides: false,
        }
    }

    fn apply(&mut self, edit: &Edit) {
        match *edit {
            Edit::Star(i) => self.models[i].star ^= true,
            Edit::Rename(i) => self.models[i].renamed ^= true,
            Edit::Grain(i) => {
                let m = &mut self.models[i];
                m.grain = if m.grain == "day" { "month" } else { "day" };
            }
            Edit::Days(i, d) => self.models[i].days = d,
            Edit::Filter(i) => self.models[i].filtered ^= true,
            Edit::Remove(i) => self.models[i].present ^= true,
            Edit::Cents(i) => self.models[i].cents ^= true,
            Edit::Unknown(i) => self.models[i].unknown ^= true,
            Edit::Disable(i) => self.models[i].disabled ^= true,
            Edit::Schema(i) => self.models[i].schema ^= true,
            Edit::Note(i) => self.models[i].noted ^= true,
            Edit::Reroute(i) => self.models[i].from = (self.models[i].from + 1) % 4,
            Edit::Macro => self.macro_divides ^= true,
            Edit::SourceColumns => self.source_has_kind ^= true,
            Edit::Dialect => {
                self.dialect = if self.dialect == "postgres" {
                    "duckdb"
                } else {
                    "postgres"
                }
            }
        }
    }

    fn sql(&self, i: usize) -> String {
        let m = &self.models[i];
        let from = match (i, m.from) {
            (_, 3) => "{{ ref('gone') }}".to_string(),
            // The next model: a cycle while that one reads this one.
            (_, 2) => format!("{{{{ ref('m{}') }}}}", (i + 1) % MODELS),
            (0, _) | (_, 1) => "{{ source('raw', 'events') }}".to_string(),
            _ => format!("{{{{ ref('m{}') }}}}", i - 1),
        };
        let amount = match (m.renamed, m.cents) {
            (true, _) => "amount * 2 as amt",
            (false, true) => "{{ cents('amount') }} as amount",
            (false, false) => "amount",
        };
        let cols = if m.star {
            "*".to_string()
        } else {
            format!("id, date_trunc('{}', ts) as ts, {amount}", m.grain)
        };
        let filter = if m.filtered {
            format!(
                "\nwhere ts between current_date - interval '{} days' and current_date",
                m.days
            )
        } else {
            String::new()
        };
        let mut head = String::new();
        if m.noted {
            head.push_str("-- reviewed\n");
        }
        if m.disabled {
            head.push_str("{{ config(enabled=false) }}\n");
        }
        if m.unknown {
            head.push_str("-- {{ not_installed() }}\n");
        }
        format!("{head}select {cols}\nfrom {from}{filter}\n")
    }

    fn write(&self, root: &Path) {
        let models = root.join("models");
        std::fs::create_dir_all(&models).unwrap();
        std::fs::write(
            root.join("dbt_project.yml"),
            "name: shop\nversion: '1.0'\nmodel-paths: [models]\n",
        )
        .unwrap();
        std::fs::write(
            root.join("ripple.yml"),
            format!("dialect: {}\n", self.dialect),
        )
        .unwrap();
        let kind = if self.source_has_kind {
            "\n          - name: kind"
        } else {
            ""
        };
        std::fs::write(
            models.join("sources.yml"),
            format!(
                "version: 2\nsources:\n  - name: raw\n    tables:\n      - name: events\n        columns:\n          - name: id\n          - name: ts\n          - name: amount{kind}\n"
            ),
        )
        .unwrap();
        let macros = root.join("macros");
        std::fs::create_dir_all(&macros).unwrap();
        let op = if self.macro_divides { "/" } else { "*" };
        std::fs::write(
            macros.join("cents.sql"),
            format!("{{% macro cents(x) %}}{{{{ x }}}} {op} 100{{% endmacro %}}\n"),
        )
        .unwrap();
        let mut props = String::from("version: 2\nmodels:\n");
        for (i, m) in self.models.iter().enumerate() {
            if m.schema {
                props.push_str(&format!(
                    "  - name: m{i}\n    config:\n      schema: marts\n"
                ));
            }
        }
        std::fs::write(models.join("models.yml"), props).unwrap();
        for i in 0..MODELS {
            let path = models.join(format!("m{i}.sql"));
            if self.models[i].present {
                std::fs::write(&path, self.sql(i)).unwrap();
            } else if path.exists() {
                std::fs::remove_file(&path).unwrap();
            }
        }
    }
}

#[derive(Debug, Clone)]
enum Edit {
    Star(usize),
    Rename(usize),
    Grain(usize),
    Days(usize, u32),
    Filter(usize),
    Remove(usize),
    Cents(usize),
    Unknown(usize),
    Disable(usize),
    Schema(usize),
    Note(usize),
    Reroute(usize),
    Macro,
    SourceColumns,
    Dialect,
}

fn edit() -> impl Strategy<Value = Edit> {
    let i = 0..MODELS;
    prop_oneof![
        i.clone().prop_map(Edit::Star),
        i.clone().prop_map(Edit::Rename),
        i.clone().prop_map(Edit::Grain),
        (i.clone(), 1u32..10).prop_map(|(i, d)| Edit::Days(i, d)),
        i.clone().prop_map(Edit::Filter),
        i.clone().prop_map(Edit::Remove),
        i.clone().prop_map(Edit::Cents),
        i.clone().prop_map(Edit::Unknown),
        i.clone().prop_map(Edit::Disable),
        i.clone().prop_map(Edit::Schema),
        i.clone().prop_map(Edit::Note),
        i.prop_map(Edit::Reroute),
        Just(Edit::Macro),
        Just(Edit::SourceColumns),
        Just(Edit::Dialect),
    ]
}

/// What one command prints, and how it ends.
fn run(root: &Path, cache: Option<&Path>, args: &[&str]) -> (Vec<u8>, Option<i32>) {
    let mut cmd = Command::cargo_bin("ripple").unwrap();
    cmd.args(args).arg("--project").arg(root);
    match cache {
        Some(dir) => cmd.arg("--cache-dir").arg(dir),
        None => cmd.arg("--no-cache"),
    };
    let out = cmd.output().unwrap();
    (out.stdout, out.status.code())
}

/// A dated impact of the source (time facts read off the SQL), with the
/// given extra arguments.
fn impact(extra: &[&'static str]) -> Vec<&'static str> {
    let mut args = vec![
        "impact",
        "source.raw.events",
        "--from",
        "2024-03-01",
        "--to",
        "2024-03-03",
        "--as-of",
        "2024-04-01",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    args
}

/// The commands compared: the whole graph (kept under its lineage), the
/// export (column lineage of every job), a column-pruned impact (column
/// lineage walked from the source) and a dated impact.
fn commands() -> Vec<Vec<&'static str>> {
    vec![
        vec!["graph", "--format", "json"],
        vec!["graph", "--format", "openlineage"],
        impact(&["--columns", "amount"]),
        impact(&[]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 24,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Any sequence of edits: every run with the cache (kept across the
    /// sequence, as a project's is) prints what a run without it prints.
    #[test]
    fn any_edits_give_the_same_answers_with_and_without_the_cache(
        edits in prop::collection::vec(edit(), 1..7)
    ) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        let cache = dir.path().join("cache");
        let mut state = State::new();
        state.write(&root);
        for args in commands() {
            run(&root, Some(&cache), &args);
        }
        for (k, e) in edits.iter().enumerate() {
            state.apply(e);
            state.write(&root);
            // Each command in turn is the first to see an edit: one that
            // answers from the lineage alone reads the models later than
            // one that reads them while the files are checked.
            let mut each = commands();
            let first = k % each.len();
            each.rotate_left(first);
            for args in each {
                let cold = run(&root, None, &args);
                let warm = run(&root, Some(&cache), &args);
                prop_assert_eq!(
                    String::from_utf8_lossy(&warm.0),
                    String::from_utf8_lossy(&cold.0),
                    "after {:?}: {:?}", edits, args
                );
                prop_assert_eq!(warm.1, cold.1);
            }
        }
    }
}

/// The cache is really used: a warm run finds its answers in the files an
/// earlier run wrote (a corrupted file would change nothing, so the test
/// swaps in a different, well-formed answer and sees it come back).
#[test]
fn a_warm_run_reads_what_the_cold_run_kept() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    State::new().write(&root);
    let export = ["graph", "--format", "openlineage"];
    let (first, _) = run(&root, None, &export);
    // The default folder, in the project, ignored by git.
    let with_default = || -> Vec<u8> {
        let out = Command::cargo_bin("ripple")
            .unwrap()
            .args(export)
            .arg("--project")
            .arg(&root)
            .output()
            .unwrap();
        assert!(out.status.success());
        out.stdout
    };
    with_default();
    let kept = root.join(".ripple_cache");
    assert!(kept.join("columns.jsonl").is_file());
    assert_eq!(
        std::fs::read_to_string(kept.join(".gitignore"))
            .unwrap()
            .lines()
            .last(),
        Some("*")
    );
    assert_eq!(
        String::from_utf8_lossy(&with_default()),
        String::from_utf8_lossy(&first)
    );
    // Every kept `amount` column renamed: a run that reads the cache
    // prints it, one that does not still prints `amount`.
    let path = kept.join("columns.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"amount\""));
    std::fs::write(&path, text.replace("\"amount\"", "\"kept_amount\"")).unwrap();
    assert!(String::from_utf8_lossy(&with_default()).contains("kept_amount"));
    let (again, _) = run(&root, None, &export);
    assert!(!String::from_utf8_lossy(&again).contains("kept_amount"));
}

/// `--no-cache` reads and writes nothing.
#[test]
fn no_cache_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    State::new().write(&root);
    run(&root, None, &["graph", "--format", "openlineage"]);
    assert!(!root.join(".ripple_cache").exists());
}

/// A cache folder that cannot be written costs a warning, not the answer.
#[test]
fn an_unwritable_cache_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    State::new().write(&root);
    // A file where the folder should be.
    let blocked = dir.path().join("blocked");
    std::fs::write(&blocked, "").unwrap();
    let (cold, _) = run(&root, None, &["graph", "--format", "openlineage"]);
    let mut cmd = Command::cargo_bin("ripple").unwrap();
    let out = cmd
        .args(["graph", "--format", "openlineage", "--cache-dir"])
        .arg(&blocked)
        .arg("--project")
        .arg(&root)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(out.stdout, cold);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("the cache could not be written"), "{err}");
}

/// A run that reads only a few jobs (a column walk) keeps what an export
/// kept: the next export is still warm.
#[test]
fn a_column_walk_does_not_empty_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    let cache = dir.path().join("cache");
    let mut state = State::new();
    state.write(&root);
    let entries = || -> usize {
        let text = std::fs::read_to_string(cache.join("columns.jsonl")).unwrap();
        // A header, then one answer a line.
        text.lines().count() - 1
    };
    run(&root, Some(&cache), &["graph", "--format", "openlineage"]);
    let after_export = entries();
    // An edit, so that the column walk has something new to keep.
    state.apply(&Edit::Rename(0));
    state.write(&root);
    run(&root, Some(&cache), &impact(&["--columns", "amount"]));
    assert!(
        entries() > after_export,
        "{} entries after the walk, {after_export} after the export",
        entries()
    );
}

/// What `graph --format json --timings` printed with the cache: standard
/// output, and standard error (the timings and any warning).
fn timed_graph(root: &Path, cache: &Path) -> (Vec<u8>, String) {
    let out = Command::cargo_bin("ripple")
        .unwrap()
        .args(["graph", "--format", "json", "--timings", "--cache-dir"])
        .arg(cache)
        .arg("--project")
        .arg(root)
        .output()
        .unwrap();
    assert!(out.status.success());
    (out.stdout, String::from_utf8_lossy(&out.stderr).to_string())
}

/// How a run loaded the dbt project, from `--timings`, and what it printed.
fn loading(root: &Path, cache: &Path) -> (String, Vec<u8>) {
    let (stdout, err) = timed_graph(root, cache);
    (dbt_phase(&err), stdout)
}

/// How the dbt project was loaded, from `--timings`' standard error: ``,
/// `(snapshot)` or `(snapshot, edits rendered)`.
fn dbt_phase(err: &str) -> String {
    err.lines()
        .find_map(|l| l.trim().strip_prefix("dbt models"))
        .map(|rest| rest.split("  ").next().unwrap_or("").trim().to_string())
        .unwrap_or_else(|| panic!("no dbt phase in {err}"))
}

/// The snapshot of the loaded project is what a warm run starts from: an
/// unchanged project is taken from it whole, a model edited alone is
/// rendered alone, and an edit that can reach other models (a new file, a
/// macro, YAML, a newly called unknown macro) reads the project again.
/// Every answer is the uncached one.
#[test]
fn the_snapshot_renders_an_edited_model_alone_and_reads_again_for_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    let cache = dir.path().join("cache");
    let mut state = State::new();
    state.write(&root);
    let uncached = |root: &Path| run(root, None, &["graph", "--format", "json"]).0;
    let steps: Vec<(Option<Edit>, &str)> = vec![
        (None, ""),
        (None, "(snapshot)"),
        (Some(Edit::Star(3)), "(snapshot, edits rendered)"),
        (Some(Edit::Disable(4)), "(snapshot, edits rendered)"),
        (Some(Edit::Disable(4)), "(snapshot, edits rendered)"),
        (Some(Edit::Unknown(1)), ""),
        (Some(Edit::Filter(1)), "(snapshot, edits rendered)"),
        (Some(Edit::Macro), ""),
        (Some(Edit::Schema(2)), ""),
        (Some(Edit::Remove(0)), ""),
        (Some(Edit::Remove(0)), ""),
        (None, "(snapshot)"),
    ];
    for (i, (edit, expected)) in steps.into_iter().enumerate() {
        if let Some(e) = &edit {
            state.apply(e);
            state.write(&root);
        }
        let (phase, out) = loading(&root, &cache);
        assert_eq!(phase, expected, "step {i}: {edit:?}");
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&uncached(&root)),
            "step {i}: {edit:?}"
        );
    }
}

/// An edit amends the snapshot through its edits file, never by writing
/// the snapshot again; a damaged edits file costs a render, not an answer;
/// a full read writes a new snapshot and drops the edits file.
#[test]
fn an_edit_amends_the_snapshot_in_its_edits_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    let cache = dir.path().join("cache");
    let mut state = State::new();
    state.write(&root);
    let snapshot = cache.join("dbt.snapshot.json");
    let edits = cache.join("dbt.edits.json");
    let export = ["graph", "--format", "openlineage"];
    let same = |root: &Path, phase: &str, step: &str| {
        let (seen, out) = loading(root, &cache);
        assert_eq!(seen, phase, "{step}");
        let uncached = run(root, None, &["graph", "--format", "json"]).0;
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&uncached),
            "{step}"
        );
        // The export carries each model's SQL: the edited models' come
        // from the edits file.
        assert_eq!(
            String::from_utf8_lossy(&run(root, Some(&cache), &export).0),
            String::from_utf8_lossy(&run(root, None, &export).0),
            "{step}"
        );
    };
    // One edit written to the project, then the run it must give.
    let edit = |state: &mut State, e: &Edit, phase: &str, step: &str| {
        state.apply(e);
        state.write(&root);
        same(&root, phase, step);
    };
    let rendered = "(snapshot, edits rendered)";
    same(&root, "", "cold");
    let written = std::fs::read(&snapshot).unwrap();
    assert!(!edits.exists());
    for (i, e) in [Edit::Star(3), Edit::Filter(1), Edit::Star(3)]
        .iter()
        .enumerate()
    {
        edit(&mut state, e, rendered, &format!("edit {i}: {e:?}"));
        assert_eq!(std::fs::read(&snapshot).unwrap(), written, "edit {i}");
        assert!(edits.is_file(), "edit {i}");
    }
    same(&root, "(snapshot)", "after the edits");
    let amended = std::fs::read(&edits).unwrap();

    // A third model edited is more than a project this small keeps aside:
    // the snapshot is written whole with the three, and the edits file goes.
    edit(
        &mut state,
        &Edit::Filter(2),
        rendered,
        "a third model edited",
    );
    assert_ne!(std::fs::read(&snapshot).unwrap(), written);
    assert!(!edits.exists());
    same(&root, "(snapshot)", "after the fold");

    // The next edit amends the new snapshot in a new edits file.
    let written = std::fs::read(&snapshot).unwrap();
    edit(&mut state, &Edit::Star(3), rendered, "one more edit");
    assert_eq!(std::fs::read(&snapshot).unwrap(), written);
    assert_ne!(std::fs::read(&edits).unwrap(), amended);

    // Damaged: the snapshot alone is used, and the edited models rendered.
    let text = std::fs::read(&edits).unwrap();
    std::fs::write(&edits, &text[..text.len() / 2]).unwrap();
    same(&root, rendered, "a torn edits file");
    same(&root, "(snapshot)", "the edits file written again");

    // A full read writes the snapshot whole, and its edits file goes.
    edit(&mut state, &Edit::Macro, "", "a macro edited");
    assert_ne!(std::fs::read(&snapshot).unwrap(), written);
    assert!(!edits.exists());
    same(&root, "(snapshot)", "after the full read");
}

/// The snapshot's SQL is raw text after the model lines, each model's
/// length in the count line: a file whose lengths do not add up is read
/// again, and each model's SQL is taken from its own place.
#[test]
fn a_damaged_snapshot_is_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    let cache = dir.path().join("cache");
    State::new().write(&root);
    let (phase, first) = loading(&root, &cache);
    assert_eq!(phase, "");
    let snapshot = cache.join("dbt.snapshot.json");
    let text = std::fs::read(&snapshot).unwrap();
    std::fs::write(&snapshot, &text[..text.len() - 1]).unwrap();
    let (phase, out) = loading(&root, &cache);
    assert_eq!(phase, "", "one byte short is read again");
    assert_eq!(out, first);
    let (phase, out) = loading(&root, &cache);
    assert_eq!(phase, "(snapshot)", "the snapshot was written whole again");
    assert_eq!(out, first);
    // The last model's SQL is the file's end: changed there (same length),
    // a warm run's OpenLineage events carry it, and no other model's.
    let export = ["graph", "--format", "openlineage"];
    let uncached = String::from_utf8(run(&root, None, &export).0).unwrap();
    assert!(!uncached.contains("FROM "));
    let mut text = std::fs::read(&snapshot).unwrap();
    let at = text
        .windows(5)
        .rposition(|w| w == b"from ")
        .expect("SQL at the end");
    text[at..at + 4].copy_from_slice(b"FROM");
    std::fs::write(&snapshot, &text).unwrap();
    let warm = String::from_utf8(run(&root, Some(&cache), &export).0).unwrap();
    assert_eq!(warm.matches("FROM ").count(), 1, "{warm}");
    assert_eq!(warm.replace("FROM ", "from "), uncached);
}

/// What `graph --format json --timings` printed with the cache, whether
/// it built the graph (else it wrote the document kept under the project's
/// lineage), and its standard error less the timings.
fn whole_graph(root: &Path, cache: &Path) -> (Vec<u8>, Made, String) {
    let (stdout, err) = timed_graph(root, cache);
    let built = err
        .lines()
        .any(|l| l.trim_start().starts_with("graph ") && !l.contains('('));
    let made = match (built, err.contains("graph (kept, patched)")) {
        (true, _) => Made::Built,
        (false, true) => Made::Patched,
        (false, false) => Made::Kept,
    };
    let warnings = err
        .lines()
        .filter(|l| l.starts_with("warning"))
        .collect::<Vec<_>>()
        .join("\n");
    (stdout, made, warnings)
}

/// How `ripple graph --format json` came by its document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Made {
    /// The graph was built.
    Built,
    /// The kept document, as it was.
    Kept,
    /// The kept document with some models' edges replaced.
    Patched,
}

/// The whole graph's JSON is kept under the project's lineage: an edit to
/// a model's SQL that changes nothing read from it (its columns, its
/// filter) writes the kept document; one that moves a read to another
/// line, or reads another model or source the graph has, patches it; one
/// that names an unknown model, or makes or breaks a cycle, builds the
/// graph again. All print what a run without the cache prints, warning
/// included.
#[test]
fn the_whole_graph_is_kept_under_its_lineage() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    let cache = dir.path().join("cache");
    let mut state = State::new();
    state.write(&root);
    use Made::*;
    let steps: Vec<(Option<Edit>, Made)> = vec![
        (None, Built),
        (None, Kept),
        (Some(Edit::Star(3)), Kept),
        (Some(Edit::Filter(2)), Kept),
        (Some(Edit::Note(2)), Patched),
        (Some(Edit::Rename(1)), Kept),
        // m3 reads the source, then m4 (which reads m3: a cycle), then
        // `gone`, then m2 again.
        (Some(Edit::Reroute(3)), Patched),
        (Some(Edit::Note(2)), Patched),
        (Some(Edit::Reroute(3)), Built),
        (Some(Edit::Reroute(3)), Built),
        (Some(Edit::Grain(4)), Kept),
        (Some(Edit::Reroute(3)), Built),
        (Some(Edit::Note(2)), Patched),
        (Some(Edit::Note(1)), Patched),
        (Some(Edit::Disable(1)), Built),
        (None, Kept),
    ];
    let mut unknown_seen = false;
    let mut cycle_seen = false;
    for (i, (edit, made)) in steps.into_iter().enumerate() {
        if let Some(e) = &edit {
            state.apply(e);
            state.write(&root);
        }
        let (out, was_made, warnings) = whole_graph(&root, &cache);
        assert_eq!(was_made, made, "step {i}: {edit:?}");
        let cold = Command::cargo_bin("ripple")
            .unwrap()
            .args(["graph", "--format", "json", "--no-cache", "--project"])
            .arg(&root)
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&cold.stdout),
            "step {i}: {edit:?}"
        );
        assert_eq!(
            warnings,
            String::from_utf8_lossy(&cold.stderr).trim_end(),
            "step {i}"
        );
        unknown_seen |= warnings.contains("problem") && state.models[3].from == 3;
        let check = Command::cargo_bin("ripple")
            .unwrap()
            .args(["check", "--no-cache", "--project"])
            .arg(&root)
            .output()
            .unwrap();
        cycle_seen |= String::from_utf8_lossy(&check.stdout).contains("cycle");
    }
    // The unknown ref (a reroute to `gone`) was warned of, from the kept
    // document too (step 10), and the cycle (step 8) was one.
    assert!(unknown_seen);
    assert!(cycle_seen);
}

/// A project folder given as an absolute path is the same project from any
/// working folder: a run from another one takes the snapshot; a relative
/// path names another folder from elsewhere, so it is read again there.
#[test]
fn an_absolute_project_folder_is_kept_whatever_the_working_folder() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    let cache = dir.path().join("cache");
    State::new().write(&root);
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let phase = |cwd: &Path, project: &Path| -> String {
        let out = Command::cargo_bin("ripple")
            .unwrap()
            .current_dir(cwd)
            .args(["graph", "--format", "json", "--timings", "--cache-dir"])
            .arg(&cache)
            .arg("--project")
            .arg(project)
            .output()
            .unwrap();
        assert!(out.status.success());
        dbt_phase(&String::from_utf8_lossy(&out.stderr))
    };
    assert_eq!(phase(dir.path(), &root), "");
    assert_eq!(phase(&elsewhere, &root), "(snapshot)");
    assert_eq!(phase(&root, &root), "(snapshot)");
    // `p` from the temporary folder, then `.` from inside it: read again.
    assert_eq!(phase(dir.path(), Path::new("p")), "");
    assert_eq!(phase(dir.path(), Path::new("p")), "(snapshot)");
    assert_eq!(phase(&root, Path::new(".")), "");
}
