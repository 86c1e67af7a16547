//! The warm cache (docs/cache.md): whatever a project goes through (edits,
//! files moved, folders linked in and out, packages installed, the cache's
//! own files damaged), a run that reads the cache prints exactly what a run
//! without it prints, a warm run reads what an earlier run kept, and
//! nothing in the cache folder is believed or followed that ripple did not
//! write there itself.

use std::path::{Path, PathBuf};

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
    /// Its file is in `models/sub/` rather than `models/`.
    moved: bool,
    /// Its file is a link to a file elsewhere in the project (which the
    /// reader does not follow: no model).
    linked: bool,
    /// Its text is a `{% snapshot %}` block.
    snapshot: bool,
    /// Names the model before it by relation in its SQL (no `ref()`): 0
    /// not, 1 on its last line, 2 two lines further down.
    hard: u8,
}

/// The project: a source, a chain of models, the source's declared columns
/// and the dialect; where the models folder is, and a package.
#[derive(Debug, Clone)]
struct State {
    models: Vec<Model>,
    source_has_kind: bool,
    dialect: &'static str,
    /// Which body the project's macro has.
    macro_divides: bool,
    /// The models folder was moved outside the project, a link to it left
    /// in its place (the reader refuses it).
    models_out: bool,
    /// The package under `dbt_packages/`: 0 none, 1 a folder of models
    /// without its `dbt_project.yml` (no package yet), 2 whole.
    package: u8,
    /// `snapshot-paths` names the models folder too: each model file is
    /// also read for snapshot blocks.
    snapshots_in_models: bool,
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
                    moved: false,
                    linked: false,
                    snapshot: false,
                    hard: 0,
                })
                .collect(),
            source_has_kind: true,
            dialect: "postgres",
            macro_divides: false,
            models_out: false,
            package: 0,
            snapshots_in_models: false,
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
            Edit::Move(i) => self.models[i].moved ^= true,
            Edit::Link(i) => self.models[i].linked ^= true,
            Edit::Snapshot(i) => self.models[i].snapshot ^= true,
            Edit::HardCoded(i) => self.models[i].hard = (self.models[i].hard + 1) % 3,
            Edit::Macro => self.macro_divides ^= true,
            Edit::SourceColumns => self.source_has_kind ^= true,
            Edit::Dialect => {
                self.dialect = if self.dialect == "postgres" {
                    "duckdb"
                } else {
                    "postgres"
                }
            }
            Edit::ModelsOut => self.models_out ^= true,
            Edit::Package => self.package = (self.package + 1) % 3,
            Edit::SnapshotsInModels => self.snapshots_in_models ^= true,
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
        // Hard-coded reads are found in the rendered SQL, not in what the
        // model line holds (a warm run once served the graph of before).
        let hard = match (i, m.hard) {
            (0, _) | (_, 0) => String::new(),
            (_, 1) => format!("\nunion all select * from analytics.m{}", i - 1),
            _ => format!("\n\n\nunion all select * from analytics.m{}", i - 1),
        };
        let sql = format!("{head}select {cols}\nfrom {from}{filter}{hard}\n");
        match m.snapshot {
            true => format!("{{% snapshot snap_m{i} %}}\n{sql}{{% endsnapshot %}}\n"),
            false => sql,
        }
    }

    /// Writes the project at `root` (the models folder moved to
    /// `outside/models` beside it when `models_out`).
    fn write(&self, root: &Path) {
        let models = root.join("models");
        let outside = root.parent().unwrap().join("outside").join("models");
        let is_link = std::fs::symlink_metadata(&models).is_ok_and(|m| m.is_symlink());
        if self.models_out && !is_link {
            std::fs::create_dir_all(outside.parent().unwrap()).unwrap();
            if models.exists() {
                std::fs::rename(&models, &outside).unwrap();
            }
            symlink(&outside, &models);
        } else if !self.models_out && is_link {
            std::fs::remove_file(&models).unwrap();
            std::fs::rename(&outside, &models).unwrap();
        }
        std::fs::create_dir_all(models.join("sub")).unwrap();
        let snapshots = if self.snapshots_in_models {
            "\nsnapshot-paths: [models]"
        } else {
            ""
        };
        std::fs::write(
            root.join("dbt_project.yml"),
            format!("name: shop\nversion: '1.0'\nmodel-paths: [models]{snapshots}\n"),
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
        let shared = root.join("shared");
        std::fs::create_dir_all(&shared).unwrap();
        for (i, m) in self.models.iter().enumerate() {
            let name = format!("m{i}.sql");
            let (top, sub) = (models.join(&name), models.join("sub").join(&name));
            let (here, there) = if m.moved { (sub, top) } else { (top, sub) };
            remove(&there);
            if !m.present {
                remove(&here);
                continue;
            }
            let text = self.sql(i);
            let was_link = std::fs::symlink_metadata(&here).is_ok_and(|m| m.is_symlink());
            if m.linked {
                std::fs::write(shared.join(&name), text).unwrap();
                if !was_link {
                    remove(&here);
                    symlink(&shared.join(&name), &here);
                }
            } else {
                if was_link {
                    remove(&here);
                }
                std::fs::write(&here, text).unwrap();
            }
        }
        let package = root.join("dbt_packages").join("pkg");
        match self.package {
            0 => {
                let _ = std::fs::remove_dir_all(root.join("dbt_packages"));
            }
            n => {
                std::fs::create_dir_all(package.join("models")).unwrap();
                std::fs::write(
                    package.join("models").join("pm.sql"),
                    "select id from {{ source('raw', 'events') }}\n",
                )
                .unwrap();
                let file = package.join("dbt_project.yml");
                match n {
                    2 => std::fs::write(file, "name: pkg\nversion: '1.0'\nmodel-paths: [models]\n")
                        .unwrap(),
                    _ => remove(&file),
                }
            }
        }
    }
}

/// Removes the file or link at `path`, if there is one.
fn remove(path: &Path) {
    if std::fs::symlink_metadata(path).is_ok() {
        std::fs::remove_file(path).unwrap();
    }
}

fn symlink(target: &Path, link: &Path) {
    #[cfg(unix)]
    std::os::unix::fs::symlink(target, link).unwrap();
    #[cfg(not(unix))]
    let _ = (target, link);
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
    Move(usize),
    Link(usize),
    Snapshot(usize),
    HardCoded(usize),
    Macro,
    SourceColumns,
    Dialect,
    ModelsOut,
    Package,
    SnapshotsInModels,
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
        i.clone().prop_map(Edit::Reroute),
        i.clone().prop_map(Edit::Move),
        i.clone().prop_map(Edit::Link),
        i.clone().prop_map(Edit::Snapshot),
        i.prop_map(Edit::HardCoded),
        Just(Edit::Macro),
        Just(Edit::SourceColumns),
        Just(Edit::Dialect),
        Just(Edit::ModelsOut),
        Just(Edit::Package),
        Just(Edit::SnapshotsInModels),
    ]
}

/// What happens to the cache folder between two runs.
#[derive(Debug, Clone)]
enum Damage {
    /// The file cut to a share of its length.
    Cut(f64),
    /// The file cut after its line at a share of its lines.
    CutLine(f64),
    /// One byte changed, at a share of its length.
    Flip(f64),
    /// The file removed.
    Delete,
    /// The file replaced by a link to a file outside the cache.
    Link,
}

/// One step of a project's life.
#[derive(Debug, Clone)]
enum Step {
    Edit(Edit),
    /// The cache file at a share of the folder's sorted files, damaged.
    Damage(f64, Damage),
    /// The cache folder replaced by a link to a folder elsewhere (the runs
    /// after it must leave that folder as it is), or the link removed.
    CacheLink,
    /// Two seconds pass: every stat taken before is old enough to trust,
    /// and the next run keeps it.
    Age,
}

fn step() -> impl Strategy<Value = Step> {
    let share = 0.0f64..1.0;
    let damage = prop_oneof![
        share.clone().prop_map(Damage::Cut),
        share.clone().prop_map(Damage::CutLine),
        share.clone().prop_map(Damage::Flip),
        Just(Damage::Delete),
        Just(Damage::Link),
    ];
    prop_oneof![
        12 => edit().prop_map(Step::Edit),
        3 => (share, damage).prop_map(|(s, d)| Step::Damage(s, d)),
        1 => Just(Step::CacheLink),
        1 => Just(Step::Age),
    ]
}

/// Where a test keeps its project, its cache and what must stay as it is.
struct Place {
    _dir: tempfile::TempDir,
    root: PathBuf,
    cache: PathBuf,
    /// Where the cache folder is linked to, holding a file of a cache
    /// file's name.
    elsewhere: PathBuf,
    /// A file outside the cache that links in the cache point to.
    victim: PathBuf,
}

impl Place {
    fn new() -> Place {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("columns.jsonl"), "not the cache's\n").unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious\n").unwrap();
        Place {
            root: dir.path().join("p"),
            cache: dir.path().join("cache"),
            elsewhere,
            victim,
            _dir: dir,
        }
    }

    /// What is in `elsewhere` and in the victim: never written by a run.
    fn untouched(&self) -> bool {
        let names: Vec<_> = std::fs::read_dir(&self.elsewhere)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.len() == 1
            && std::fs::read_to_string(self.elsewhere.join("columns.jsonl")).unwrap()
                == "not the cache's\n"
            && std::fs::read_to_string(&self.victim).unwrap() == "precious\n"
    }

    /// The regular files of the cache folder, sorted.
    fn cache_files(&self) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(&self.cache) else {
            return Vec::new();
        };
        let mut files: Vec<PathBuf> = entries
            .map(|e| e.unwrap().path())
            .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file()))
            .collect();
        files.sort();
        files
    }

    fn damage(&self, share: f64, damage: &Damage) {
        if is_link(&self.cache) {
            return;
        }
        let files = self.cache_files();
        if files.is_empty() {
            return;
        }
        let path = &files[((share * files.len() as f64) as usize).min(files.len() - 1)];
        let bytes = std::fs::read(path).unwrap();
        let at = |f: f64| ((f * bytes.len() as f64) as usize).min(bytes.len().saturating_sub(1));
        match *damage {
            Damage::Cut(f) => std::fs::write(path, &bytes[..at(f)]).unwrap(),
            Damage::CutLine(f) => {
                let ends: Vec<usize> = (0..bytes.len()).filter(|&i| bytes[i] == b'\n').collect();
                if let Some(&end) =
                    ends.get(((f * ends.len() as f64) as usize).min(ends.len().saturating_sub(1)))
                {
                    std::fs::write(path, &bytes[..end + 1]).unwrap();
                }
            }
            Damage::Flip(f) => {
                let mut bytes = bytes.clone();
                if !bytes.is_empty() {
                    let i = at(f);
                    bytes[i] = if bytes[i] == b'0' { b'1' } else { b'0' };
                }
                std::fs::write(path, bytes).unwrap();
            }
            Damage::Delete => std::fs::remove_file(path).unwrap(),
            Damage::Link => {
                std::fs::remove_file(path).unwrap();
                symlink(&self.victim, path);
            }
        }
    }

    fn toggle_cache_link(&self) {
        if is_link(&self.cache) {
            std::fs::remove_file(&self.cache).unwrap();
        } else {
            let _ = std::fs::remove_dir_all(&self.cache);
            symlink(&self.elsewhere, &self.cache);
        }
    }
}

fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_symlink())
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

/// The dated arguments of `impact` and `plan` for the source.
fn dated(command: &'static str, extra: &[&'static str]) -> Vec<&'static str> {
    let mut args = vec![
        command,
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

/// A dated impact of the source (time facts read off the SQL), with the
/// given extra arguments.
fn impact(extra: &[&'static str]) -> Vec<&'static str> {
    dated("impact", extra)
}

/// The commands compared: the whole graph (kept under its lineage), the
/// export (column lineage of every job), a column-pruned impact (column
/// lineage walked from the source), a dated impact, the check and the
/// plan.
fn commands() -> Vec<Vec<&'static str>> {
    vec![
        vec!["graph", "--format", "json"],
        vec!["graph", "--format", "openlineage"],
        impact(&["--columns", "amount"]),
        impact(&[]),
        vec!["check"],
        dated("plan", &[]),
    ]
}

/// Every command, with the cache and without it: the same output and exit
/// code, and nothing outside the cache written.
fn same_answers(place: &Place, what: &str, first: usize) -> Result<(), TestCaseError> {
    let mut each = commands();
    // Each command in turn is the first to see a change: one that answers
    // from the lineage alone reads the models later than one that reads
    // them while the files are checked.
    let n = each.len();
    each.rotate_left(first % n);
    for args in each {
        let cold = run(&place.root, None, &args);
        let warm = run(&place.root, Some(&place.cache), &args);
        prop_assert_eq!(
            String::from_utf8_lossy(&warm.0),
            String::from_utf8_lossy(&cold.0),
            "{}: {:?}",
            what,
            args
        );
        prop_assert_eq!(warm.1, cold.1, "{}: {:?}", what, args);
        prop_assert!(
            place.untouched(),
            "{}: {:?} wrote outside the cache",
            what,
            args
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        // More for a longer hunt: RIPPLE_CACHE_CASES=500 cargo test --test cache.
        cases: std::env::var("RIPPLE_CACHE_CASES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(24),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Any sequence of edits, moves, links, package changes and damage to
    /// the cache: every run with the cache (kept across the sequence, as a
    /// project's is) prints what a run without it prints.
    #[test]
    fn any_edits_give_the_same_answers_with_and_without_the_cache(
        steps in prop::collection::vec(step(), 1..7)
    ) {
        let place = Place::new();
        let mut state = State::new();
        state.write(&place.root);
        for args in commands() {
            run(&place.root, Some(&place.cache), &args);
        }
        for (k, s) in steps.iter().enumerate() {
            match s {
                Step::Edit(e) => {
                    state.apply(e);
                    state.write(&place.root);
                }
                Step::Damage(share, d) => place.damage(*share, d),
                Step::CacheLink => place.toggle_cache_link(),
                Step::Age => {
                    std::thread::sleep(std::time::Duration::from_millis(2100));
                    // A run that keeps the stats now old enough to trust.
                    run(&place.root, Some(&place.cache), &["graph", "--format", "json"]);
                }
            }
            same_answers(&place, &format!("after {steps:?}, step {k}"), k)?;
        }
    }
}

/// The cache is really used: a warm run finds its answers in the files an
/// earlier run wrote, so it writes none of them again (a write is a new
/// file renamed in place); and a file changed after ripple wrote it, even
/// into a different, well-formed answer, is not believed.
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
    let path = kept.join("columns.jsonl");
    let inode = |p: &Path| {
        #[cfg(unix)]
        return std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).unwrap());
        #[cfg(not(unix))]
        return std::fs::read(p).unwrap();
    };
    let written = inode(&path);
    assert_eq!(
        String::from_utf8_lossy(&with_default()),
        String::from_utf8_lossy(&first)
    );
    assert_eq!(inode(&path), written, "every answer was found kept");
    // Every kept `amount` column renamed: a run that reads the cache
    // finds the file changed since it was written, and prints `amount`.
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"amount\""));
    std::fs::write(&path, text.replace("\"amount\"", "\"kept_amount\"")).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&with_default()),
        String::from_utf8_lossy(&first)
    );
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

/// A cache folder that cannot be used costs a warning, said once, not the
/// answer.
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
    assert!(err.contains("this run uses no cache"), "{err}");
    assert!(err.contains("is not a folder"), "{err}");
    assert_eq!(err.matches("warning").count(), 1, "{err}");
    assert_eq!(std::fs::read(&blocked).unwrap(), b"");
    // A folder that cannot be made: the answer, and the warning at the end.
    let under = blocked.join("cache");
    let out = Command::cargo_bin("ripple")
        .unwrap()
        .args(["graph", "--format", "openlineage", "--cache-dir"])
        .arg(&under)
        .arg("--project")
        .arg(&root)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(out.stdout, cold);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("warning"), "{err}");
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
    // Whether the edits file is there right after the first run: a later
    // run may write one again, with no model in it, when a file too new to
    // trust at the first run (git's "racy" files) has grown old enough (two
    // seconds: a loaded machine takes that between two runs).
    let same = |root: &Path, phase: &str, step: &str| -> bool {
        let (seen, out) = loading(root, &cache);
        assert_eq!(seen, phase, "{step}");
        let edits_then = edits.exists();
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
        edits_then
    };
    // One edit written to the project, then the run it must give.
    let edit = |state: &mut State, e: &Edit, phase: &str, step: &str| -> bool {
        state.apply(e);
        state.write(&root);
        same(&root, phase, step)
    };
    let rendered = "(snapshot, edits rendered)";
    assert!(!same(&root, "", "cold"));
    let written = std::fs::read(&snapshot).unwrap();
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
    let edits_then = edit(
        &mut state,
        &Edit::Filter(2),
        rendered,
        "a third model edited",
    );
    assert_ne!(std::fs::read(&snapshot).unwrap(), written);
    assert!(!edits_then);
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
    let edits_then = edit(&mut state, &Edit::Macro, "", "a macro edited");
    assert_ne!(std::fs::read(&snapshot).unwrap(), written);
    assert!(!edits_then);
    same(&root, "(snapshot)", "after the full read");
}

/// The snapshot's SQL is raw text after the model lines, each model's
/// length in the count line: a file cut short, or changed after it was
/// written, is read again; each model's SQL is taken from its own place.
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
    // Each model's SQL from its own place: the export carries every one.
    let export = ["graph", "--format", "openlineage"];
    let uncached = String::from_utf8(run(&root, None, &export).0).unwrap();
    assert_eq!(
        String::from_utf8(run(&root, Some(&cache), &export).0).unwrap(),
        uncached
    );
    // The last model's SQL changed in place (same length): not believed.
    assert!(!uncached.contains("FROM "));
    let mut text = std::fs::read(&snapshot).unwrap();
    let at = text
        .windows(5)
        .rposition(|w| w == b"from ")
        .expect("SQL at the end");
    text[at..at + 4].copy_from_slice(b"FROM");
    std::fs::write(&snapshot, &text).unwrap();
    let warm = String::from_utf8(run(&root, Some(&cache), &export).0).unwrap();
    assert_eq!(warm, uncached);
    let (phase, _) = loading(&root, &cache);
    assert_eq!(phase, "(snapshot)", "read again and written whole");
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

/// Every command prints, with the cache in `cache`, what it prints
/// without one.
fn assert_same_answers(root: &Path, cache: &Path, what: &str) {
    for args in commands() {
        let cold = run(root, None, &args);
        let warm = run(root, Some(cache), &args);
        assert_eq!(
            String::from_utf8_lossy(&warm.0),
            String::from_utf8_lossy(&cold.0),
            "{what}: {args:?}"
        );
        assert_eq!(warm.1, cold.1, "{what}: {args:?}");
    }
}

/// The models folder moved outside the project, a link left in its
/// place: the reader refuses the folder (`path-outside-project`), and so
/// does a warm run, whose files and folders all look as they were.
#[cfg(unix)]
#[test]
fn a_folder_a_link_moves_outside_the_project_is_refused_warm_too() {
    let place = Place::new();
    let mut state = State::new();
    state.write(&place.root);
    assert_same_answers(&place.root, &place.cache, "before");
    state.apply(&Edit::ModelsOut);
    state.write(&place.root);
    let (check, _) = run(&place.root, None, &["check"]);
    assert!(String::from_utf8_lossy(&check).contains("path-outside-project"));
    assert_same_answers(&place.root, &place.cache, "moved out");
    // A model edited out there is not rendered either.
    state.apply(&Edit::Star(2));
    state.write(&place.root);
    assert_same_answers(&place.root, &place.cache, "edited out there");
    state.apply(&Edit::ModelsOut);
    state.write(&place.root);
    assert_same_answers(&place.root, &place.cache, "moved back");
}

/// A folder on the way to the cache that is a link (a committed `.cache
/// -> ../outside`, named by a fixed `--cache-dir .cache/ripple`) is
/// refused as a link at the cache folder is: the cache was written
/// outside the checkout.
#[cfg(unix)]
#[test]
fn a_link_on_the_way_to_the_cache_folder_is_refused() {
    let place = Place::new();
    let state = State::new();
    state.write(&place.root);
    symlink(&place.elsewhere, &place.root.join(".cache"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ripple"))
        .args([
            "graph",
            "--format",
            "json",
            "--cache-dir",
            ".cache/ripple",
            "--project",
            ".",
        ])
        .current_dir(&place.root)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains(".cache is a link"), "{err}");
    assert!(
        !place.elsewhere.join("ripple").exists(),
        "the cache was written through the link"
    );
}

/// `dbt_project.yml` replaced by a link to the same text outside the
/// project: the cold run refuses it (`path-outside-project`); a warm run,
/// whose file's text is as it was, once answered as before.
#[cfg(unix)]
#[test]
fn a_settings_file_a_link_moves_outside_the_project_is_refused_warm_too() {
    let place = Place::new();
    let state = State::new();
    state.write(&place.root);
    assert_same_answers(&place.root, &place.cache, "before");
    let settings = place.root.join("dbt_project.yml");
    let outside = place.elsewhere.join("dbt_project.yml");
    std::fs::copy(&settings, &outside).unwrap();
    remove(&settings);
    symlink(&outside, &settings);
    let (check, _) = run(&place.root, None, &["check"]);
    assert!(String::from_utf8_lossy(&check).contains("path-outside-project"));
    assert_same_answers(&place.root, &place.cache, "linked out");
    remove(&settings);
    std::fs::copy(&outside, &settings).unwrap();
    assert_same_answers(&place.root, &place.cache, "back in");
}

/// A file of a folder both `model-paths` and `snapshot-paths` name is a
/// model and a snapshot file: when it gains a `{% snapshot %}` block the
/// project gains a snapshot, which rendering the model alone never gives.
#[test]
fn a_model_file_that_gains_a_snapshot_block_is_read_again() {
    let place = Place::new();
    let mut state = State::new();
    state.apply(&Edit::SnapshotsInModels);
    state.write(&place.root);
    assert_same_answers(&place.root, &place.cache, "before");
    state.apply(&Edit::Snapshot(3));
    state.write(&place.root);
    let (graph, _) = run(&place.root, None, &["graph", "--format", "json"]);
    assert!(String::from_utf8_lossy(&graph).contains("snapshot.snap_m3"));
    assert_same_answers(&place.root, &place.cache, "a snapshot block");
    let (phase, _) = loading(&place.root, &place.cache);
    assert_eq!(phase, "(snapshot)");
}

/// A relation named by hand in a model's SQL is a read the graph finds in
/// the rendered SQL, which the model's line did not hold: adding, moving
/// or removing one left a warm run serving the graph of before (round 26),
/// and a patched graph wrote a hard-coded edge back as a manifest one.
#[test]
fn a_relation_named_by_hand_is_read_warm_too() {
    let place = Place::new();
    let mut state = State::new();
    state.models[1].from = 1;
    state.write(&place.root);
    assert_same_answers(&place.root, &place.cache, "before");
    for (what, hard) in [
        ("named", 1),
        ("moved down", 2),
        ("gone", 0),
        ("named again", 1),
    ] {
        state.models[1].hard = hard;
        state.write(&place.root);
        let (graph, _) = run(&place.root, None, &["graph", "--format", "json"]);
        let hard_edge = String::from_utf8_lossy(&graph).contains("\"evidence\": \"hard-coded\"");
        assert_eq!(hard_edge, hard != 0, "{what}");
        assert_same_answers(&place.root, &place.cache, what);
    }
    // Another model's reads change (patched), the hand-named read kept.
    state.models[3].from = 1;
    state.write(&place.root);
    let (warm, made, _) = whole_graph(&place.root, &place.cache);
    assert_eq!(made, Made::Patched);
    let (cold, _) = run(&place.root, None, &["graph", "--format", "json"]);
    assert_eq!(
        String::from_utf8_lossy(&warm),
        String::from_utf8_lossy(&cold)
    );
    assert_same_answers(&place.root, &place.cache, "another model rerouted");
}

/// A package folder under `dbt_packages/` completed in place (its
/// `dbt_project.yml` written last, as an interrupted `dbt deps` leaves
/// it): `dbt_packages/` itself does not change, so its time stamps
/// (trusted once two seconds old) cannot tell; the warm run asks again.
#[test]
fn a_package_completed_in_place_is_read() {
    let place = Place::new();
    let mut state = State::new();
    state.apply(&Edit::Package);
    state.write(&place.root);
    std::thread::sleep(std::time::Duration::from_millis(2100));
    // Every stat old enough: this run keeps them, trusted.
    assert_same_answers(&place.root, &place.cache, "a package folder, not yet one");
    state.apply(&Edit::Package);
    state.write(&place.root);
    let (graph, _) = run(&place.root, None, &["graph", "--format", "json"]);
    assert!(String::from_utf8_lossy(&graph).contains("model.pm"));
    assert_same_answers(&place.root, &place.cache, "the package completed");
}

/// The kept graph document cut short (a full disk, a crash, a copy): a
/// warm run writes the document the graph gives, never the cut one.
#[test]
fn a_cut_kept_graph_is_not_served() {
    let place = Place::new();
    State::new().write(&place.root);
    let args = ["graph", "--format", "json"];
    let (cold, _) = run(&place.root, None, &args);
    run(&place.root, Some(&place.cache), &args);
    let kept = place.cache.join("graph-json.snapshot.json");
    let bytes = std::fs::read(&kept).unwrap();
    for cut in [bytes.len() - 1, bytes.len() - 40, bytes.len() / 2] {
        std::fs::write(&kept, &bytes[..cut]).unwrap();
        let (warm, code) = run(&place.root, Some(&place.cache), &args);
        assert_eq!(code, Some(0));
        assert_eq!(
            String::from_utf8_lossy(&warm),
            String::from_utf8_lossy(&cold),
            "cut at {cut}"
        );
    }
}

/// The edits file cut at any line end, or a byte changed in it: the edits
/// it held are not believed, so an edited model is never served as it
/// was before its edit.
#[test]
fn an_edits_file_cut_anywhere_is_not_believed() {
    let place = Place::new();
    let mut state = State::new();
    state.write(&place.root);
    assert_same_answers(&place.root, &place.cache, "before");
    // m3 reads the source now: its line in the edits file says so.
    state.apply(&Edit::Reroute(3));
    state.write(&place.root);
    let (phase, _) = loading(&place.root, &place.cache);
    assert_eq!(phase, "(snapshot, edits rendered)");
    let edits = place.cache.join("dbt.edits.json");
    let bytes = std::fs::read(&edits).unwrap();
    let ends: Vec<usize> = (0..bytes.len()).filter(|&i| bytes[i] == b'\n').collect();
    assert!(ends.len() >= 3, "a header, the inputs, a model");
    for end in ends.iter().take(ends.len() - 1) {
        std::fs::write(&edits, &bytes[..end + 1]).unwrap();
        assert_same_answers(&place.root, &place.cache, &format!("cut at {end}"));
        std::fs::write(&edits, &bytes).unwrap();
    }
    let mut flipped = bytes.clone();
    let at = flipped.len() / 3;
    flipped[at] = if flipped[at] == b'1' { b'2' } else { b'1' };
    std::fs::write(&edits, &flipped).unwrap();
    assert_same_answers(&place.root, &place.cache, "a byte changed");
}

/// An index of the kept graph whose edges name nodes it does not have: a
/// warm run patching the document builds the graph instead, and never
/// panics.
#[test]
fn a_damaged_graph_index_is_no_index() {
    let place = Place::new();
    let mut state = State::new();
    state.write(&place.root);
    let args = ["graph", "--format", "json"];
    run(&place.root, Some(&place.cache), &args);
    let index = place.cache.join("graph-index.snapshot.json");
    let text = std::fs::read_to_string(&index).unwrap();
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    // The index's JSON, and whatever the file holds after it.
    let doc: serde_json::Value = serde_json::Deserializer::from_str(&lines[1])
        .into_iter()
        .next()
        .unwrap()
        .unwrap();
    // Every edge but those of m3's job points past the nodes. Spliced in as
    // text: the index's key is a number larger than JSON values hold.
    let jobs = doc["jobs"].as_array().unwrap();
    let m3 = jobs.iter().position(|j| j[0] == "model.m3").unwrap();
    let mut edges = doc["edges"].as_array().unwrap().clone();
    for e in &mut edges {
        if e[2] != m3 {
            e[0] = 999.into();
        }
    }
    let from = lines[1].find("\"edges\":[").unwrap() + "\"edges\":".len();
    let to = from + lines[1][from..].find("]]").unwrap() + 2;
    lines[1].replace_range(from..to, &serde_json::Value::from(edges).to_string());
    std::fs::write(&index, lines.concat()).unwrap();
    // An edit that only reroutes m3's read: the document is patched.
    state.apply(&Edit::Reroute(3));
    state.write(&place.root);
    let (cold, _) = run(&place.root, None, &args);
    let (warm, code) = run(&place.root, Some(&place.cache), &args);
    assert_eq!(code, Some(0));
    assert_eq!(
        String::from_utf8_lossy(&warm),
        String::from_utf8_lossy(&cold)
    );
}

/// The offset of the linker's build id in an executable (its GNU note's
/// descriptor), if it has one.
fn build_id_at(exe: &[u8]) -> Option<usize> {
    // namesz 4, descsz 20 (SHA-1), type 3 (NT_GNU_BUILD_ID), "GNU\0".
    let note = b"\x04\x00\x00\x00\x14\x00\x00\x00\x03\x00\x00\x00GNU\x00";
    let head = &exe[..exe.len().min(1 << 16)];
    head.windows(note.len())
        .position(|w| w == note)
        .map(|at| at + note.len())
}

/// Another build of ripple (here: the executable with another build id,
/// as another link writes it, its size and time the same) starts from an
/// empty cache: what an older build kept may not be what this one reads.
#[test]
fn another_build_of_the_same_size_and_time_starts_empty() {
    let place = Place::new();
    State::new().write(&place.root);
    let (phase, _) = loading(&place.root, &place.cache);
    assert_eq!(phase, "");
    let exe = assert_cmd::cargo::cargo_bin("ripple");
    let mut bytes = std::fs::read(&exe).unwrap();
    // Without a build id the whole executable is hashed: any byte will do.
    let at = build_id_at(&bytes).unwrap_or(bytes.len() - 1);
    bytes[at] ^= 0xff;
    let other = place.root.parent().unwrap().join("ripple-other");
    std::fs::write(&other, &bytes).unwrap();
    drop(bytes);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let when = std::fs::metadata(&exe).unwrap().modified().unwrap();
    std::fs::File::options()
        .write(true)
        .open(&other)
        .unwrap()
        .set_modified(when)
        .unwrap();
    assert_eq!(
        std::fs::metadata(&other).unwrap().len(),
        std::fs::metadata(&exe).unwrap().len()
    );
    let out = std::process::Command::new(&other)
        .args(["graph", "--format", "json", "--timings", "--cache-dir"])
        .arg(&place.cache)
        .arg("--project")
        .arg(&place.root)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(dbt_phase(&String::from_utf8_lossy(&out.stderr)), "");
    // And this build's cache is this build's again.
    let (phase, _) = loading(&place.root, &place.cache);
    assert_eq!(phase, "");
    let (phase, _) = loading(&place.root, &place.cache);
    assert_eq!(phase, "(snapshot)");
}

/// Links planted in the cache folder at the names a write may take (the
/// temporary names an earlier build used, for every process id a run may
/// get, and the files' own names) are never written through: each write
/// goes to a new file of a name no one could know, made by the write.
#[cfg(target_os = "linux")]
#[test]
fn a_planted_link_in_the_cache_is_never_written_through() {
    let place = Place::new();
    let mut state = State::new();
    state.write(&place.root);
    run(
        &place.root,
        Some(&place.cache),
        &["graph", "--format", "json"],
    );
    for name in [
        "dbt.snapshot.json",
        "columns.jsonl",
        "graph-json.snapshot.json",
    ] {
        let path = place.cache.join(name);
        remove(&path);
        symlink(&place.victim, &path);
    }
    let last: u32 = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0);
    for pid in last + 1..last + 2000 {
        for name in [
            "dbt.snapshot.json",
            "columns.jsonl",
            "graph-json.snapshot.json",
        ] {
            for n in 0..3 {
                let tmp = place.cache.join(format!(".{name}.{pid}.{n}.tmp"));
                symlink(&place.victim, &tmp);
            }
        }
    }
    state.apply(&Edit::Note(2));
    state.write(&place.root);
    assert_same_answers(&place.root, &place.cache, "links planted");
    assert!(place.untouched());
    assert!(!is_link(&place.cache.join("dbt.snapshot.json")));
}

/// A project that commits `.ripple_cache` as a link out of the project (a
/// pull request can), or as a folder of its own: no run reads or writes
/// there; each says once that it runs without the cache, and answers as
/// a run without one.
#[cfg(unix)]
#[test]
fn a_cache_folder_ripple_did_not_make_is_never_used() {
    let place = Place::new();
    State::new().write(&place.root);
    let default = place.root.join(".ripple_cache");
    let run_default = |args: &[&str]| {
        Command::cargo_bin("ripple")
            .unwrap()
            .args(args)
            .arg("--project")
            .arg(&place.root)
            .output()
            .unwrap()
    };
    for how in ["a link out of the project", "a folder of the project's own"] {
        match how.starts_with("a link") {
            true => symlink(&place.elsewhere, &default),
            false => {
                std::fs::create_dir(&default).unwrap();
                std::fs::write(default.join("columns.jsonl"), "planted\n").unwrap();
            }
        }
        for args in commands() {
            let out = run_default(&args);
            let (cold, code) = run(&place.root, None, &args);
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&cold),
                "{how}: {args:?}"
            );
            assert_eq!(out.status.code(), code);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(err.matches("uses no cache").count(), 1, "{how}: {err}");
        }
        assert!(place.untouched(), "{how}");
        if how.starts_with("a folder") {
            let names: Vec<_> = std::fs::read_dir(&default).unwrap().collect();
            assert_eq!(names.len(), 1, "{how}");
            assert_eq!(
                std::fs::read_to_string(default.join("columns.jsonl")).unwrap(),
                "planted\n"
            );
        }
        match is_link(&default) {
            true => remove(&default),
            false => std::fs::remove_dir_all(&default).unwrap(),
        }
    }
    // Once gone, ripple makes its own: private, and used.
    run_default(&["graph", "--format", "json"]);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&default).unwrap().permissions().mode();
    assert_eq!(mode & 0o7777, 0o1700);
    let out = run_default(&["graph", "--format", "json"]);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
