//! dbt-style projects: `dbt_project.yml`, models rendered with a real Jinja
//! engine, property YAML, seeds, snapshots, macros, installed packages.

pub(crate) mod jinja;
mod python;
mod snapshot;
mod yaml;
pub(crate) use yaml::CONTRACT_COLUMNS;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use minijinja::Value as JValue;
use rayon::prelude::*;
use serde_json::{Map, Value};

use self::jinja::{
    ConfigRenderer, MacroFile, PLACEHOLDER, PackageVars, Relation, Relations, Renderer, Settings,
};
use self::yaml::{ProjectFile, Properties, block_config, merge_config};
use super::Progress;
use super::files::{inside, line_of, read_error, relative, stem, walk};
use crate::cache::inputs::{Listing, Recorder};
use crate::cache::{Cache, Key};
use crate::config::Config;
use crate::project::{
    Dataset, DatasetKind, Diagnostic, Job, JobKind, Lineage, Part, Reference, Target,
};

/// The root project or an installed package.
struct Unit {
    /// `None` for the root project.
    package: Option<String>,
    dir: PathBuf,
    file: ProjectFile,
    props: Properties,
}

/// A SQL file to render: a model, or one `{% snapshot %}` block.
struct Template {
    id: String,
    kind: DatasetKind,
    name: String,
    package: Option<String>,
    file: String,
    /// Line of the template's first line in `file`.
    first_line: u32,
    text: String,
    /// Configuration known before rendering (project blocks, YAML).
    config: Map<String, Value>,
    columns: Vec<String>,
    /// Whether its YAML declares data tests.
    tests: bool,
    /// A Python model: `text` is the Jinja its `dbt.*` calls stand for,
    /// with the findings reading it gave; what renders is no SQL.
    python: Option<Vec<Diagnostic>>,
    /// What dbt's naming macros see of the node besides its name and
    /// config (see [`node_facts`]).
    node: Value,
}

/// The parts of dbt's `node` that naming macros read (`fqn`,
/// `original_file_path`, `path`, `package_name`, `unique_id`): without
/// them, `node.fqn[1]` (the "schema from folder" pattern) was empty.
fn node_facts(unit: &Unit, kind: DatasetKind, name: &str, file: &str, folders: &[String]) -> Value {
    let package = if unit.file.name.is_empty() {
        unit.package.clone().unwrap_or_default()
    } else {
        unit.file.name.clone()
    };
    let mut fqn = vec![package.clone()];
    fqn.extend(folders.iter().cloned());
    fqn.push(name.to_string());
    let file_name = Path::new(file)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut path = folders.join("/");
    if !path.is_empty() {
        path.push('/');
    }
    path.push_str(&file_name);
    serde_json::json!({
        "fqn": fqn,
        "original_file_path": file,
        "path": path,
        "package_name": package,
        "unique_id": format!("{}.{package}.{name}", kind.as_str()),
    })
}

/// Folder names as paths.
fn names(paths: &[String]) -> Vec<&Path> {
    paths.iter().map(Path::new).collect()
}

/// Whether `root` holds a dbt project.
pub(crate) fn is_dbt_project(root: &Path) -> bool {
    root.join("dbt_project.yml").is_file()
}

/// Reads the dbt project at `root`: from the warm cache's snapshot when
/// the files it read last time are unchanged, or when only model files
/// changed, by rendering those again (docs/cache.md, "Snapshots").
pub(crate) fn load(
    root: &Path,
    config: &Config,
    options: &super::LoadOptions,
    cache: &Cache,
) -> (DbtPart, Loading) {
    let progress = options.progress;
    if !cache.is_on() {
        let part = read_project(root, config, progress, None).into_part();
        return (DbtPart::Ready(part), Loading::Read(None));
    }
    let key = snapshot::key(root, config);
    if let Some((pending, how)) = snapshot::reuse(cache, key, root, config, options.lazy) {
        return (DbtPart::Kept(pending), how);
    }
    let (part, lineage) = read_and_keep(root, config, progress, cache, key);
    (DbtPart::Ready(part), Loading::Read(lineage))
}

/// Reads and renders the project whole, and keeps it as its snapshot
/// under `key`, with the digest of its lineage once written.
fn read_and_keep(
    root: &Path,
    config: &Config,
    progress: &dyn Progress,
    cache: &Cache,
    key: Key,
) -> (Part, Option<Lineage>) {
    let rec = Recorder::default();
    let loaded = read_project(root, config, progress, Some(&rec));
    let lineage = snapshot::keep(cache, key, rec.finish(), &loaded);
    (loaded.into_part(), lineage)
}

/// The dbt project's part, or what reads it from the warm cache's snapshot
/// when it is asked for: a run answered from its lineage alone (a kept
/// graph) never reads the 10,000 models' lines.
pub(crate) enum DbtPart {
    /// Read.
    Ready(Part),
    /// In the snapshot.
    Kept(snapshot::Pending),
}

impl DbtPart {
    /// The part; a snapshot whose models do not read is read again from
    /// the project's files (and kept anew).
    pub(crate) fn into_part(self, root: &Path, config: &Config, cache: &Cache) -> Part {
        match self {
            DbtPart::Ready(part) => part,
            DbtPart::Kept(pending) => pending.into_part().unwrap_or_else(|| {
                let key = snapshot::key(root, config);
                read_and_keep(root, config, &super::NoProgress, cache, key).0
            }),
        }
    }
}

/// How [`load`] came by the project, for `--timings`; from the snapshot,
/// with what the project's lineage is made of (see `snapshot::lineage`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Loading {
    /// Read and rendered whole (and kept as a snapshot, with its lineage,
    /// when the cache is on).
    Read(Option<Lineage>),
    /// The snapshot, unchanged.
    Snapshot(Option<Lineage>),
    /// The snapshot, with edited models rendered again.
    Rendered(Option<Lineage>),
}

impl Loading {
    /// The phase's name.
    pub fn phase(&self) -> &'static str {
        match self {
            Loading::Read(_) => "dbt models",
            Loading::Snapshot(_) => "dbt models (snapshot)",
            Loading::Rendered(_) => "dbt models (snapshot, edits rendered)",
        }
    }

    /// What the part's lineage is made of, when the cache could tell.
    pub fn lineage(self) -> Option<Lineage> {
        match self {
            Loading::Read(l) | Loading::Snapshot(l) | Loading::Rendered(l) => l,
        }
    }
}

/// A file's text, noted by `rec` when the warm cache is on.
fn read(rec: Option<&Recorder>, path: &Path) -> crate::error::Result<String> {
    let Some(rec) = rec else {
        return crate::input::read_text(path);
    };
    let (text, meta) = crate::input::read_text_with_metadata(path);
    rec.file(path, text.as_ref().ok().map(String::as_str), meta.as_ref());
    text
}

/// A folder listed again as the reader listed it.
fn relist(dir: &Path, extensions: &[&str]) -> Listing {
    super::files::listing(dir, extensions)
}

/// What the reader asks of the file system beside reading files and
/// listing folders; each answer is recorded, and a warm run asks again
/// ([`ask`]): no stat of a folder vouches for where a path through it
/// leads, nor for what its sub-folders hold.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
enum Question {
    /// [`inside`]: whether a folder a setting names lies in the project.
    Inside {
        root: PathBuf,
        base: PathBuf,
        rel: PathBuf,
        allow: bool,
        file: String,
        key: String,
    },
    /// [`packages_in`]: which folders under the install path hold a package.
    Packages { dir: PathBuf },
    /// Whether a settings file (`dbt_project.yml`) lies in the project:
    /// where a link at its name leads, which its text does not show.
    Settings { root: PathBuf, path: PathBuf },
}

impl Question {
    fn text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The answer to `question`, as a warm run's record compares it.
fn answer(question: &Question) -> String {
    match question {
        Question::Inside {
            root,
            base,
            rel,
            allow,
            file,
            key,
        } => format!("{:?}", inside(root, base, rel, *allow, file, key)),
        Question::Packages { dir } => {
            serde_json::to_string(&packages_in(dir).1).unwrap_or_default()
        }
        Question::Settings { root, path } => settings_answer(root, path),
    }
}

/// [`Question::Settings`]'s answer: the refusal, if any.
fn settings_answer(root: &Path, path: &Path) -> String {
    match crate::input::settings_inside(root, path) {
        Ok(_) => "inside".to_string(),
        Err(e) => format!("refused: {e}"),
    }
}

/// Notes with `rec` whether the settings file at `path` lies in the
/// project, for a warm run to ask again.
pub(crate) fn note_settings(rec: Option<&Recorder>, root: &Path, path: &Path) {
    if let Some(rec) = rec {
        let question = Question::Settings {
            root: root.to_path_buf(),
            path: path.to_path_buf(),
        };
        rec.probe(question.text(), settings_answer(root, path));
    }
}

/// The answer now to a question recorded as `text`; one that does not
/// read is answered with nothing a question was ever answered with.
fn ask(text: &str) -> String {
    match serde_json::from_str::<Question>(text) {
        Ok(q) => answer(&q),
        Err(_) => "a question that does not read".to_string(),
    }
}

/// The folders of `paths` (relative to `base`) that lie inside the project
/// at `root`, the errors for the rest added to `refused`, as
/// [`super::files::confine`] finds them; each answer noted by `rec`.
fn confine<'p>(
    rec: Option<&Recorder>,
    root: &Path,
    base: &Path,
    paths: impl IntoIterator<Item = &'p Path>,
    allow: bool,
    (file, key): (&str, &str),
    refused: &mut Vec<Diagnostic>,
) -> Vec<PathBuf> {
    paths
        .into_iter()
        .filter_map(|rel| {
            let found = inside(root, base, rel, allow, file, key);
            if let Some(rec) = rec {
                let question = Question::Inside {
                    root: root.to_path_buf(),
                    base: base.to_path_buf(),
                    rel: rel.to_path_buf(),
                    allow,
                    file: file.to_string(),
                    key: key.to_string(),
                };
                rec.probe(question.text(), format!("{found:?}"));
            }
            found.map_err(|d| refused.push(d)).ok()
        })
        .collect()
}

/// The packages under `dir` ([`package_dirs`]), and that as a listing.
fn packages_in(dir: &Path) -> (Vec<PathBuf>, Listing) {
    let found = package_dirs(dir);
    let listing = match std::fs::metadata(dir) {
        Ok(_) => Listing::Names(
            found
                .iter()
                .map(|d| d.to_string_lossy().into_owned())
                .collect(),
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Listing::Absent,
        Err(_) => Listing::Unreadable,
    };
    (found, listing)
}

/// One rendered model or snapshot, with what a snapshot keeps to render it
/// again.
#[derive(Clone)]
struct Slot {
    /// The template's configuration before rendering, as JSON (the rest of
    /// the template is in its dataset); only when recording or reusing.
    meta: Option<Box<serde_json::value::RawValue>>,
    /// Whether it is a model file of its own (no other role, one template):
    /// an edit to it can be rendered alone.
    editable: bool,
    /// The unknown names its text calls.
    called: Vec<(String, bool)>,
    dataset: Dataset,
    job: Job,
    diagnostics: Vec<Diagnostic>,
    /// What the graph's hard-coded reads are found from in its SQL, which
    /// its line does not hold: a digest kept in the line, so that an edit
    /// naming a table by hand changes the lineage
    /// (`sql::hard_coded::unexplained_digest`).
    named: u64,
}

/// The dbt project as read: what comes before rendering, then each
/// template's result in order.
struct Loaded {
    /// Seeds, sources, and the findings before rendering.
    prelude: Part,
    slots: Vec<Slot>,
    /// The renderer's settings, macro files and the macros' calls, as JSON;
    /// only when recording.
    state: Option<String>,
    /// Fuel the renders used together (see `jinja::RUN_FUEL`).
    fuel: u64,
}

impl Loaded {
    /// The project's part: the prelude, then every enabled model.
    fn into_part(self) -> Part {
        let mut out = self.prelude;
        out.datasets.reserve(self.slots.len());
        out.jobs.reserve(self.slots.len());
        for s in self.slots {
            if !is_enabled(&s.dataset) {
                continue;
            }
            out.datasets.push(s.dataset);
            out.jobs.push(s.job);
            out.diagnostics.extend(s.diagnostics);
        }
        out
    }
}

/// `{{ config(enabled=false) }}` in the model's own file: dbt lists the
/// model as disabled, so it is no node.
fn is_enabled(d: &Dataset) -> bool {
    !(matches!(d.config.get("enabled"), Some(Value::Bool(false)))
        || matches!(d.config.get("enabled"), Some(Value::String(s)) if s.eq_ignore_ascii_case("false")))
}

/// The macros of dbt's the dbt executor's overlay defines itself: the
/// three that name a model's relation (wrapped, to name shadows),
/// `run_hooks` (emptied: hooks would run against production),
/// `should_store_failures` (false: a test's failures would be stored in
/// production's audit schema), `run_query` and `statement` (a model's body
/// may only read through them) and `source` (restated sources read their
/// shadows). A project's own definitions of them are renamed in the overlay.
pub const NAME_MACROS: [&str; 8] = [
    "generate_database_name",
    "generate_schema_name",
    "generate_alias_name",
    "run_hooks",
    "should_store_failures",
    "run_query",
    "statement",
    "source",
];

/// Reads the dbt project at `root`; with `rec`, noting every file read and
/// folder listed, and keeping what renders a model again.
fn read_project(
    root: &Path,
    config: &Config,
    progress: &dyn Progress,
    rec: Option<&Recorder>,
) -> Loaded {
    let mut out = Part::default();
    let root_file = match yaml::read_project_file(root, root, rec) {
        Ok((f, warning)) => {
            out.diagnostics.extend(warning);
            f
        }
        Err(d) => {
            out.diagnostics.push(d);
            return Loaded {
                prelude: out,
                slots: Vec::new(),
                state: None,
                fuel: 0,
            };
        }
    };
    let mut units = vec![Unit {
        package: None,
        dir: root.to_path_buf(),
        file: root_file.clone(),
        props: Properties::default(),
    }];
    let packages = confine(
        rec,
        root,
        root,
        [Path::new(&root_file.packages_install_path)],
        config.allow_outside_project,
        ("dbt_project.yml", "packages-install-path"),
        &mut out.diagnostics,
    );
    let mut package_folders = Vec::new();
    for p in &packages {
        let (found, listing) = packages_in(p);
        if let Some(rec) = rec {
            let question = Question::Packages { dir: p.clone() };
            rec.probe(
                question.text(),
                serde_json::to_string(&listing).unwrap_or_default(),
            );
        }
        package_folders.extend(found);
    }
    for dir in package_folders {
        match yaml::read_project_file(&dir, root, rec) {
            Ok((file, warning)) => {
                out.diagnostics.extend(warning);
                let name = if file.name.is_empty() {
                    stem(&dir)
                } else {
                    file.name.clone()
                };
                units.push(Unit {
                    package: Some(name),
                    dir,
                    file,
                    props: Properties::default(),
                });
            }
            Err(d) => out.diagnostics.push(d),
        }
    }

    // Jinja inside YAML values (`+enabled: "{{ var('x', false) }}"`).
    let (vars, package_vars) = merged_vars(config, &units);
    let config_jinja = ConfigRenderer::new(&vars.vars, &config.target);

    // Property YAML, macros, seeds and SQL templates of every unit.
    let mut macro_files = Vec::new();
    let mut seeds = Vec::new();
    let mut sql_files: Vec<(usize, PathBuf, bool)> = Vec::new();
    // How many ways each file is read (a model, a snapshot file, macros,
    // YAML): a model file read another way too is no model of its own.
    let mut roles: HashMap<PathBuf, usize> = HashMap::new();
    // The root's `sources:` block configures packages' sources too.
    let root_sources = units.first().map(|u| u.file.sources.clone());
    for (u, unit) in units.iter_mut().enumerate() {
        // Every folder a project file names stays inside the project.
        let project_file = relative(root, &unit.dir.join("dbt_project.yml"));
        let allow = config.allow_outside_project;
        let mut refused = Vec::new();
        let mut paths_of = |paths: Vec<&Path>, file: &str, key: &str| -> Vec<PathBuf> {
            confine(
                rec,
                root,
                &unit.dir,
                paths,
                allow,
                (file, key),
                &mut refused,
            )
        };
        let file = &unit.file;
        let model_dirs = if unit.package.is_none() && !config.models.is_empty() {
            let paths = config.models.iter().map(PathBuf::as_path).collect();
            paths_of(paths, crate::config::CONFIG_FILE, "models")
        } else {
            paths_of(names(&file.model_paths), &project_file, "model-paths")
        };
        let seed_dirs = paths_of(names(&file.seed_paths), &project_file, "seed-paths");
        let snapshot_dirs = paths_of(names(&file.snapshot_paths), &project_file, "snapshot-paths");
        let macro_dirs = paths_of(names(&file.macro_paths), &project_file, "macro-paths");
        out.diagnostics.extend(refused);
        let mut found = |dir: &Path, extensions: &[&str]| -> Vec<PathBuf> {
            let f = walk(root, dir, extensions);
            out.diagnostics.extend(f.problems);
            if let Some(rec) = rec {
                for (d, listing) in f.dirs {
                    rec.dir(&d, extensions, listing);
                }
            }
            f.files
        };
        let mut yaml_files = Vec::new();
        for dir in model_dirs.iter().chain(&seed_dirs).chain(&snapshot_dirs) {
            yaml_files.extend(found(dir, &[".yml", ".yaml"]));
        }
        let mut macro_paths = Vec::new();
        for dir in &macro_dirs {
            macro_paths.extend(found(dir, &[".sql", ".jinja", ".jinja2"]));
        }
        for dir in &seed_dirs {
            seeds.extend(found(dir, &[".csv"]).into_iter().map(|p| (u, p)));
        }
        for dir in &model_dirs {
            sql_files.extend(
                found(dir, &[".sql", ".py"])
                    .into_iter()
                    .map(|p| (u, p, false)),
            );
        }
        for dir in &snapshot_dirs {
            sql_files.extend(found(dir, &[".sql"]).into_iter().map(|p| (u, p, true)));
        }
        for path in yaml_files.iter().chain(&macro_paths) {
            *roles.entry(path.clone()).or_default() += 1;
        }
        // Parsed in parallel, added in file order.
        let parsed = in_parallel(&yaml_files, &mut out.diagnostics, |path| {
            let file = relative(root, path);
            let text = read(rec, path).map_err(|e| read_error(file.clone(), &e))?;
            let (doc, warning) = yaml::parse(&text, &file)?;
            Ok((file, text, doc, warning))
        });
        for (file, text, doc, warning) in parsed {
            out.diagnostics.extend(warning);
            unit.props.add(&doc, &text, &file);
        }
        // Read and stripped in parallel (the block scan is per file).
        macro_files.extend(in_parallel(&macro_paths, &mut out.diagnostics, |path| {
            let text = read(rec, path).map_err(|e| read_error(relative(root, path), &e))?;
            Ok(MacroFile {
                path: relative(root, path),
                package: unit.package.clone(),
                text: jinja::strip_non_macro_blocks(&text),
            })
        }));
        // dbt renders the Jinja in a source's names when it parses
        // (`database: "{{ target.database }}"`, `schema: "{{ env_var('S') }}_raw"`);
        // unrendered, every relation printed from them would be wrong.
        for s in &mut unit.props.sources {
            render_source_names(&config_jinja, s, &mut out.diagnostics);
        }
        // A source table turned off (`config: {enabled: false}`, often
        // by a var, or `+enabled: false` in a `sources:` block of
        // dbt_project.yml) is no node, as in dbt. The property file's
        // config wins over the project file's.
        let block_enabled: Vec<Option<Value>> = unit
            .props
            .sources
            .iter()
            .map(|s| {
                let path = root.join(&s.file);
                let mut fqn = folders(unit, &path, &unit.file.model_paths);
                fqn.push(s.source.clone());
                project_blocks(root_sources.as_ref(), unit, |f| &f.sources, &fqn, &s.table)
                    .remove("enabled")
            })
            .collect();
        let mut at = 0;
        unit.props.sources.retain(|s| {
            let from_block = block_enabled[at].clone();
            at += 1;
            s.enabled
                .clone()
                .or(from_block)
                .is_none_or(|e| config_jinja.render(e) != Value::Bool(false))
        });
    }

    // Read the SQL files and make their templates in parallel (the order
    // stays the files' order); snapshots may hold several blocks.
    let versions: Vec<HashMap<String, (String, String)>> = units
        .iter()
        .enumerate()
        .map(|(i, unit)| {
            let stems: std::collections::HashSet<String> = sql_files
                .iter()
                .filter(|(u, _, snapshot)| *u == i && !snapshot)
                .map(|(_, p, _)| stem(p))
                .collect();
            version_files(unit, &stems)
        })
        .collect();
    let made = in_parallel(
        &sql_files,
        &mut out.diagnostics,
        |(u, path, is_snapshot)| {
            let file = relative(root, path);
            let text = read(rec, path).map_err(|e| read_error(file.clone(), &e))?;
            let unit = &units[*u];
            Ok(if *is_snapshot {
                snapshot_blocks(&text)
                    .into_iter()
                    .map(|(name, body, first_line)| {
                        template(
                            &config_jinja,
                            &units,
                            unit,
                            DatasetKind::Snapshot,
                            &name,
                            &file,
                            first_line,
                            body,
                            None,
                        )
                    })
                    .collect()
            } else {
                let name = stem(Path::new(&file));
                let (model, version) = versioned_name(&versions[*u], &name);
                let (text, python) = if file.ends_with(".py") {
                    let (jinja, findings) = python::model_jinja(&text, &file)?;
                    (jinja, Some(findings))
                } else {
                    (text, None)
                };
                vec![Template {
                    python,
                    ..template(
                        &config_jinja,
                        &units,
                        unit,
                        DatasetKind::Model,
                        &model,
                        &file,
                        1,
                        text,
                        version,
                    )
                }]
            })
        },
    );
    let mut templates: Vec<Template> = made.into_iter().flatten().collect();
    // dbt 1.9+: snapshots declared in YAML over an existing relation.
    for unit in &units {
        for (name, props) in &unit.props.snapshots {
            if let Some(relation) = &props.relation {
                let text = format!("select * from {{{{ {relation} }}}}");
                templates.push(template(
                    &config_jinja,
                    &units,
                    unit,
                    DatasetKind::Snapshot,
                    name,
                    &props.file,
                    props.line,
                    text,
                    None,
                ));
            }
        }
    }
    // Disabled by a property file or `dbt_project.yml`: left out, unless
    // its own text may say otherwise — dbt puts a model's `config(enabled=
    // true)` above both (a model disabled in YAML yet enabled in its file
    // once vanished); rendered, its merged config then decides.
    templates.retain(|t| {
        t.config.get("enabled") != Some(&Value::Bool(false)) || t.text.contains("enabled")
    });

    // Relations known before rendering, for ref() and source() to print.
    let settings = settings(
        config,
        &units,
        (vars, package_vars),
        &templates,
        &seeds,
        root,
    );
    let relations_by_id: HashMap<String, Relation> = templates
        .iter()
        .map(|t| {
            (
                t.id.clone(),
                relation_for(&settings, &t.config, &t.name, t.kind),
            )
        })
        .collect();
    // What the dbt executor's overlay needs: the project file, its macro
    // folders, and the files that define the macros the overlay wraps
    // (read again whole: `text` holds only their macro blocks).
    let name_macros = macro_files
        .iter()
        .filter(|m| m.package.is_none())
        .filter(|m| {
            jinja::macro_blocks(&m.text)
                .iter()
                .any(|b| NAME_MACROS.contains(&b.name.as_str()))
        })
        .filter_map(|m| {
            let text = read(rec, &root.join(&m.path)).ok()?;
            Some((m.path.clone(), text))
        })
        .collect();
    out.dbt_root = Some(crate::project::DbtRoot {
        project_file: root_file.text.clone(),
        macro_paths: root_file.macro_paths.clone(),
        name_macros,
    });
    let settings_json = rec.map(|_| serde_json::to_string(&settings).unwrap_or_default());
    let texts: Vec<&str> = templates.iter().map(|t| t.text.as_str()).collect();
    let (renderer, macro_errors, calls) = Renderer::with_calls(settings, &macro_files, &texts);
    drop(texts);
    for (file, e) in macro_errors {
        out.diagnostics.push(Diagnostic::error(
            "render-error",
            Some(file),
            e.line,
            0,
            format!("{}; that macro is unavailable", e.message),
        ));
    }

    // Seeds are datasets without a job: loaded from files, not computed.
    for (u, path) in &seeds {
        let unit = &units[*u];
        let name = stem(path);
        let props = unit.props.seeds.get(&name).cloned().unwrap_or_default();
        let mut cfg = project_config(
            &units,
            unit,
            "seeds",
            &folders(unit, path, &unit.file.seed_paths),
            &name,
        );
        for (k, v) in props.config {
            merge_config(&mut cfg, &k, v);
        }
        let cfg: Map<String, Value> = cfg
            .into_iter()
            .map(|(k, v)| parse_time(k, v, &config_jinja))
            .collect();
        if cfg.get("enabled") == Some(&Value::Bool(false)) {
            continue;
        }
        let seed_folders = folders(unit, path, &unit.file.seed_paths);
        let facts = node_facts(
            unit,
            DatasetKind::Seed,
            &name,
            &relative(root, path),
            &seed_folders,
        );
        let relation = final_relation(
            &renderer,
            &default_settings(config),
            &cfg,
            &name,
            DatasetKind::Seed,
            &facts,
        );
        let mut seed = dataset(
            format!("seed.{name}"),
            DatasetKind::Seed,
            name,
            relation,
            unit.package.clone(),
            relative(root, path),
            1,
            cfg,
            props.columns,
        );
        seed.tests = props.tests;
        out.datasets.push(seed);
    }
    // A config value whose Jinja a bound refused (what it would print,
    // its stack) is used as written: said once each.
    for (text, reason) in config_jinja.failures() {
        let shown: String = text.chars().take(120).collect();
        let more = if shown.len() < text.len() { "..." } else { "" };
        out.diagnostics.push(Diagnostic::warning(
            "render-error",
            None,
            0,
            0,
            format!(
                "the config value `{shown}{more}` did not render ({reason}); it is used as written"
            ),
        ));
    }
    for unit in &units {
        for s in &unit.props.sources {
            let mut relation = format!("{}.{}", s.schema, s.identifier);
            if let Some(db) = &s.database {
                relation = format!("{db}.{relation}");
            }
            let mut cfg = Map::new();
            cfg.insert("tags".into(), Value::from(s.tags.clone()));
            out.datasets.push(dataset(
                format!("source.{}.{}", s.source, s.table),
                DatasetKind::Source,
                format!("{}.{}", s.source, s.table),
                relation,
                unit.package.clone(),
                s.file.clone(),
                s.line,
                cfg,
                s.columns.clone(),
            ));
        }
    }

    // A model file that nothing else reads, holding one template: what an
    // edit can be rendered alone for. A file read another way too (a
    // snapshot folder's file, whose blocks its text decides; a macro
    // file) is not, whatever it holds now.
    for (_, path, _) in &sql_files {
        *roles.entry(path.clone()).or_default() += 1;
    }
    let shared: BTreeSet<String> = roles
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(path, _)| relative(root, path))
        .collect();
    drop(roles);
    let mut per_file: HashMap<&str, usize> = HashMap::new();
    for t in &templates {
        *per_file.entry(t.file.as_str()).or_default() += 1;
    }
    let editable: Vec<bool> = templates
        .iter()
        .map(|t| {
            t.kind == DatasetKind::Model
                && t.first_line == 1
                && t.file.ends_with(".sql")
                && per_file.get(t.file.as_str()) == Some(&1)
                && !shared.contains(&t.file)
        })
        .collect();
    drop(per_file);

    // Render every model and snapshot, in parallel.
    progress.start(templates.len() as u64);
    // On threads with stacks for the deepest chain and value a model's
    // fuel allows (jinja/guard.rs).
    let render = |((t, called), editable): ((Template, Vec<(String, bool)>), bool)| {
        let this = relations_by_id.get(&t.id).cloned().unwrap_or(Relation {
            database: None,
            schema: String::new(),
            identifier: t.name.clone(),
            exact: false,
        });
        // What a warm run needs to render it alone again.
        let meta = rec.and_then(|_| {
            serde_json::value::to_raw_value(
                &serde_json::json!({"config": &t.config, "node": &t.node}),
            )
            .ok()
        });
        let r = render_template(&renderer, t, this, config, rec.is_some());
        progress.inc(1);
        Slot {
            meta,
            editable,
            called,
            dataset: r.dataset,
            job: r.job,
            diagnostics: r.diagnostics,
            named: r.named,
        }
    };
    // In batches, the run's fuel settled after each: which models it
    // refuses follows their order, whatever the threads.
    let slots: Vec<Slot> = jinja::guard::on_render_threads(|| {
        let mut slots = Vec::with_capacity(templates.len());
        let mut items = templates.into_iter().zip(calls.sources).zip(editable);
        loop {
            let batch: Vec<_> = items.by_ref().take(jinja::RENDER_BATCH).collect();
            if batch.is_empty() {
                break;
            }
            slots.par_extend(batch.into_par_iter().map(render));
            renderer.settle();
        }
        slots
    });
    progress.finish();
    // A run cut short by its fuel is not kept: a warm run would otherwise
    // render its edits with fresh fuel, and answer unlike a cold run.
    let settings_json = settings_json.filter(|_| !renderer.spent_out());
    let state = settings_json.map(|s| snapshot::state(s, &macro_files, &calls.macros));
    Loaded {
        prelude: out,
        slots,
        state,
        fuel: renderer.fuel_spent(),
    }
}

/// A source's database, schema and identifier with their Jinja rendered.
/// A database that renders to nothing (`{{ target.database }}` with no
/// database set renders `none`) is no database: the target's is used, as
/// dbt's native rendering of `None` gives. A name that fails to render
/// stays as written, with a warning.
fn render_source_names(
    jinja: &ConfigRenderer,
    s: &mut yaml::SourceDecl,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let mut render = |field: &str, text: &str| -> String {
        jinja.render_name(text).unwrap_or_else(|reason| {
            diagnostics.push(Diagnostic::warning(
                "render-error",
                Some(s.file.clone()),
                s.line,
                0,
                format!(
                    "the {field} of source `{}.{}` did not render ({reason}); it is used as written",
                    s.source, s.table
                ),
            ));
            text.to_string()
        })
    };
    if let Some(db) = &s.database {
        let db = render("database", db);
        s.database = match db.as_str() {
            "" | "none" | "None" => None,
            _ => Some(db),
        };
    }
    s.schema = render("schema", &s.schema);
    s.identifier = render("identifier", &s.identifier);
}

/// `f` over `items` on all cores, the answers kept in `items`' order and
/// each failure sent to `diagnostics` in its place.
fn in_parallel<T: Sync, U: Send>(
    items: &[T],
    diagnostics: &mut Vec<Diagnostic>,
    f: impl Fn(&T) -> Result<U, Diagnostic> + Sync + Send,
) -> Vec<U> {
    let results: Vec<Result<U, Diagnostic>> = items.par_iter().map(f).collect();
    let mut out = Vec::with_capacity(results.len());
    for r in results {
        match r {
            Ok(u) => out.push(u),
            Err(d) => diagnostics.push(d),
        }
    }
    out
}

/// Folders under `<packages-install-path>` that hold a dbt project.
fn package_dirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("dbt_project.yml").is_file())
        .collect();
    dirs.sort();
    dirs
}

/// A model file's name and version: `orders_v2.sql` is version 2 of
/// `orders` when YAML declares it so. `versions` maps file stems to
/// (model, version), from [`version_files`].
fn versioned_name(
    versions: &HashMap<String, (String, String)>,
    file_stem: &str,
) -> (String, Option<String>) {
    match versions.get(file_stem) {
        Some((name, v)) => (name.clone(), Some(v.clone())),
        None => (file_stem.to_string(), None),
    }
}

/// File stem → (model, version) for every declared model version, given
/// the stems of the unit's model files.
fn version_files(
    unit: &Unit,
    stems: &std::collections::HashSet<String>,
) -> HashMap<String, (String, String)> {
    let mut out = HashMap::new();
    for (name, props) in &unit.props.models {
        for v in &props.versions {
            let defined_in = v
                .defined_in
                .clone()
                .unwrap_or_else(|| format!("{name}_v{}", v.v));
            out.insert(defined_in, (name.clone(), v.v.clone()));
        }
        // dbt lets the latest version live in the file named like the
        // model when no `_v` file defines it (its relation is still
        // `name_v<latest>`): read as unversioned, it was planned onto a
        // stale legacy table.
        let latest = props.latest();
        let latest_file = latest.as_ref().and_then(|l| {
            props.versions.iter().find(|d| &d.v == l).map(|d| {
                d.defined_in
                    .clone()
                    .unwrap_or_else(|| format!("{name}_v{l}"))
            })
        });
        if let (Some(latest), Some(file)) = (latest, latest_file)
            && !stems.contains(&file)
        {
            out.entry(name.clone())
                .or_insert_with(|| (name.clone(), latest));
        }
    }
    out
}

/// The sub-folders of `path` below whichever of `roots` holds it.
fn folders(unit: &Unit, path: &Path, roots: &[String]) -> Vec<String> {
    for r in roots {
        if let Ok(rel) = path.strip_prefix(unit.dir.join(r)) {
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            parts.pop();
            return parts;
        }
    }
    Vec::new()
}

/// Configuration from `dbt_project.yml` blocks: the package's own, then the
/// root project's (which may configure packages too).
fn project_config(
    units: &[Unit],
    unit: &Unit,
    key: &str,
    folders: &[String],
    name: &str,
) -> Map<String, Value> {
    fn block<'f>(key: &str, f: &'f ProjectFile) -> &'f Value {
        match key {
            "models" => &f.models,
            "seeds" => &f.seeds,
            _ => &f.snapshots,
        }
    }
    let root = units.first().map(|r| block(key, &r.file));
    project_blocks(root, unit, |f| block(key, f), folders, name)
}

/// The configuration `block` of `unit`'s `dbt_project.yml`, then of the
/// root project's (`root_block`, which configures packages too), gives the
/// node at (project, `folders`..., `name`).
fn project_blocks(
    root_block: Option<&Value>,
    unit: &Unit,
    block: impl Fn(&ProjectFile) -> &Value,
    folders: &[String],
    name: &str,
) -> Map<String, Value> {
    let project_name = if unit.file.name.is_empty() {
        unit.package.clone().unwrap_or_default()
    } else {
        unit.file.name.clone()
    };
    let mut path: Vec<&str> = vec![project_name.as_str()];
    path.extend(folders.iter().map(String::as_str));
    path.push(name);
    let mut blocks: Vec<&Value> = vec![block(&unit.file)];
    if unit.package.is_some()
        && let Some(root) = root_block
    {
        blocks.push(root);
    }
    let mut cfg = Map::new();
    for b in blocks {
        for (k, v) in block_config(b, &path) {
            merge_config(&mut cfg, &k, v);
        }
    }
    cfg
}

#[allow(clippy::too_many_arguments)]
fn template(
    config_jinja: &ConfigRenderer,
    units: &[Unit],
    unit: &Unit,
    kind: DatasetKind,
    name: &str,
    file: &str,
    first_line: u32,
    text: String,
    version: Option<String>,
) -> Template {
    let (key, props) = match kind {
        DatasetKind::Snapshot => ("snapshots", unit.props.snapshots.get(name)),
        _ => ("models", unit.props.models.get(name)),
    };
    let path = unit.dir.join(file);
    let roots = match kind {
        DatasetKind::Snapshot => &unit.file.snapshot_paths,
        _ => &unit.file.model_paths,
    };
    // `file` is relative to the project root, `unit.dir` may be a package.
    let folders = folders(unit, &path, roots);
    let mut config = project_config(units, unit, key, &folders, name);
    let mut columns = Vec::new();
    if let Some(props) = props {
        for (k, v) in &props.config {
            merge_config(&mut config, k, v.clone());
        }
        if let Some(v) = &version
            && let Some(decl) = props.versions.iter().find(|d| &d.v == v)
        {
            for (k, val) in &decl.config {
                merge_config(&mut config, k, val.clone());
            }
        }
        columns = props.columns.clone();
    }
    let tests = props.is_some_and(|p| p.tests);
    let id = match (&kind, &version) {
        (DatasetKind::Snapshot, _) => format!("snapshot.{name}"),
        (_, Some(v)) => format!("model.{name}.v{v}"),
        _ => format!("model.{name}"),
    };
    let mut config: Map<String, Value> = config
        .into_iter()
        .map(|(k, v)| parse_time(k, v, config_jinja))
        .collect();
    if let Some(v) = &version {
        config.insert("version".into(), Value::from(v.clone()));
        if let Some(latest) = props.and_then(|p| p.latest()) {
            config.insert("latest_version".into(), Value::from(latest));
        }
    }
    Template {
        id,
        kind,
        name: name.to_string(),
        package: unit.package.clone(),
        file: file.to_string(),
        first_line,
        text,
        config,
        columns,
        tests,
        python: None,
        node: node_facts(unit, kind, name, file, &folders),
    }
}

/// `{% snapshot name %} ... {% endsnapshot %}` blocks: (name, body, line).
fn snapshot_blocks(text: &str) -> Vec<(String, String, u32)> {
    let mut out = Vec::new();
    let mut open: Option<(String, usize)> = None;
    for (tag, at) in jinja::tags(text) {
        let body = tag.trim_start_matches(['{', '%', '-', '+']).trim_start();
        if let Some(rest) = body.strip_prefix("snapshot ") {
            let name: String = rest
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            open = Some((name, at + tag.len()));
        } else if body.starts_with("endsnapshot")
            && let Some((name, start)) = open.take()
        {
            out.push((name, text[start..at].to_string(), line_of(text, start)));
        }
    }
    out
}

fn default_settings(config: &Config) -> Settings {
    Settings {
        project_name: String::new(),
        vars: BTreeMap::new(),
        jinja_vars: BTreeMap::new(),
        package_vars: BTreeMap::new(),
        target: config.target.clone(),
        adapter: adapter_name(config),
        relations: Relations::default(),
        dispatch: BTreeMap::new(),
    }
}

fn adapter_name(config: &Config) -> String {
    config.dialect.name().to_string()
}

/// The renderer's settings: vars, target, and pre-render relations.
fn settings(
    config: &Config,
    units: &[Unit],
    (vars, package_vars): (PackageVars, BTreeMap<String, PackageVars>),
    templates: &[Template],
    seeds: &[(usize, PathBuf)],
    _root: &Path,
) -> Settings {
    let base = default_settings(config);
    let root = &units[0];
    let mut relations = Relations {
        default_schema: config.target.schema.clone(),
        default_database: config.target.database.clone(),
        ..Relations::default()
    };
    for t in templates {
        let rel = relation_for(&base, &t.config, &t.name, t.kind);
        // A versioned model: `ref('m', v=2)` is that version's relation, an
        // unpinned `ref('m')` the latest's (round 28: the first version's
        // was printed, so promoting v2 changed no rendered text and `diff`
        // saw no change).
        let get = |k: &str| t.config.get(k).and_then(Value::as_str);
        if let Some(v) = get("version") {
            relations
                .by_name
                .insert(jinja::versioned_key(&t.name, v), rel.clone());
            if get("latest_version") == Some(v) {
                relations.by_name.insert(t.name.clone(), rel);
                continue;
            }
        }
        relations.by_name.entry(t.name.clone()).or_insert(rel);
    }
    for (_, path) in seeds {
        let name = stem(path);
        let rel = relation_for(&base, &Map::new(), &name, DatasetKind::Seed);
        relations.by_name.entry(name).or_insert(rel);
    }
    for unit in units {
        for s in &unit.props.sources {
            relations.sources.insert(
                (s.source.clone(), s.table.clone()),
                Relation {
                    database: s.database.clone(),
                    schema: s.schema.clone(),
                    identifier: s.identifier.clone(),
                    exact: false,
                },
            );
        }
    }
    Settings {
        project_name: root.file.name.clone(),
        vars: vars.vars,
        jinja_vars: vars.jinja_vars,
        package_vars,
        relations,
        dispatch: root.file.dispatch.clone(),
        ..base
    }
}

/// The vars each project's models see: the root project's, then each
/// package's where they differ. dbt's precedence, highest first:
/// `ripple.yml` (dbt's `--vars`), the root `dbt_project.yml`'s block under
/// the node's package name (its own name for its own models), the root's
/// globals, then for a package's node its own `dbt_project.yml`'s block
/// under its name and its globals. Values are rendered with `var`,
/// `env_var` and `target` (for config values); those that are Jinja are
/// also kept as written, for models to render in their own context where
/// they read them (as dbt does).
fn merged_vars(config: &Config, units: &[Unit]) -> (PackageVars, BTreeMap<String, PackageVars>) {
    let root = &units[0];
    let scope = |files: &[(&ProjectFile, &str)]| {
        let mut vars: BTreeMap<String, Value> = BTreeMap::new();
        // Lowest first: each later layer overrides.
        for (file, name) in files {
            vars.extend(file.vars.iter().map(|(k, v)| (k.clone(), v.clone())));
            if let Some(Value::Object(block)) = file.vars.get(*name) {
                vars.extend(block.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        vars.extend(config.vars.iter().map(|(k, v)| (k.clone(), v.clone())));
        let jinja_vars = vars
            .iter()
            .filter_map(|(k, v)| {
                let text = v.as_str()?;
                (text.contains("{{") || text.contains("{%")).then(|| (k.clone(), text.to_string()))
            })
            .collect();
        // dbt renders Jinja in `vars` values (`"{{ env_var('START', '2020-01-01') }}"`,
        // one var built from another) before any model sees them.
        let renderer = jinja::ConfigRenderer::new(&vars, &config.target);
        for v in vars.values_mut() {
            *v = renderer.render(std::mem::take(v));
        }
        PackageVars { vars, jinja_vars }
    };
    let own = scope(&[(&root.file, root.file.name.as_str())]);
    let mut packages = BTreeMap::new();
    for unit in &units[1..] {
        let Some(package) = &unit.package else {
            continue;
        };
        let seen = scope(&[
            (&unit.file, package.as_str()),
            (&root.file, package.as_str()),
        ]);
        if seen != own {
            packages.insert(package.clone(), seen);
        }
    }
    (own, packages)
}

/// dbt's default naming: schema `target` or `target_custom`, alias = name,
/// database only when configured. Snapshots use `target_schema` as is.
fn relation_for(
    settings: &Settings,
    cfg: &Map<String, Value>,
    name: &str,
    kind: DatasetKind,
) -> Relation {
    let get = |k: &str| cfg.get(k).and_then(Value::as_str).map(str::to_string);
    let target = &settings.target;
    let schema = match (kind, get("target_schema"), get("schema")) {
        (DatasetKind::Snapshot, Some(s), _) => s,
        (_, _, Some(custom)) => format!("{}_{custom}", target.schema),
        _ => target.schema.clone(),
    };
    Relation {
        database: get("database")
            .or(get("target_database"))
            .or(target.database.clone()),
        schema,
        // dbt's `generate_alias_name`: a version's relation is `name_v2`.
        identifier: get("alias").unwrap_or_else(|| match get("version") {
            Some(v) => format!("{name}_v{}", v.replace('.', "_")),
            None => name.to_string(),
        }),
        exact: false,
    }
}

/// The relation after rendering, through the project's own
/// `generate_schema_name` / `generate_alias_name` macros when it has them.
fn final_relation(
    renderer: &Renderer,
    settings: &Settings,
    cfg: &Map<String, Value>,
    name: &str,
    kind: DatasetKind,
    facts: &Value,
) -> String {
    let mut rel = relation_for(settings, cfg, name, kind);
    // Most projects define none: no node is built for them.
    let hooks = [
        "generate_database_name",
        "generate_schema_name",
        "generate_alias_name",
    ];
    if !hooks.iter().any(|h| renderer.has_hook(h)) {
        return rel.name();
    }
    let get = |k: &str| cfg.get(k).and_then(Value::as_str).map(str::to_string);
    let mut node = facts.clone();
    if let Value::Object(n) = &mut node {
        n.insert("name".into(), Value::from(name));
        n.insert("resource_type".into(), Value::from(kind.as_str()));
        n.insert(
            "version".into(),
            get("version").map_or(Value::Null, Value::from),
        );
        n.insert("config".into(), Value::Object(cfg.clone()));
    }
    let node = JValue::from(minijinja::value::Serde(node));
    // `generate_database_name(custom_database_name, node)`.
    let database = get("database")
        .map(JValue::from)
        .unwrap_or(JValue::from(()));
    if let Some(Ok(db)) = renderer.call_hook("generate_database_name", &[database, node.clone()])
        && !db.is_empty()
    {
        rel.database = Some(db);
    }
    if kind != DatasetKind::Snapshot || get("target_schema").is_none() {
        let custom = get("schema").map(JValue::from).unwrap_or(JValue::from(()));
        if let Some(Ok(schema)) =
            renderer.call_hook("generate_schema_name", &[custom, node.clone()])
            && !schema.is_empty()
        {
            rel.schema = schema;
        }
    }
    let alias = get("alias").map(JValue::from).unwrap_or(JValue::from(()));
    if let Some(Ok(alias)) = renderer.call_hook("generate_alias_name", &[alias, node])
        && !alias.is_empty()
    {
        rel.identifier = alias;
    }
    rel.name()
}

/// Statements one rendered model may hold. dbt runs a model as one
/// statement (a custom materialization may run a few); each statement read
/// with its columns keeps about 1.5 KB, and 40 models of 80 bytes looping to
/// 100,000 statements each took `impact --columns` 31 s and 5.9 GB.
const MAX_MODEL_STATEMENTS: usize = 1_000;

/// A config value as dbt has it when it parses: rendered, but for hooks,
/// which dbt renders when it runs them (`grant select on {{ this }}` in
/// `dbt_project.yml` was a false render error, with no place).
fn parse_time(k: String, v: Value, config_jinja: &jinja::ConfigRenderer) -> (String, Value) {
    match HOOK_KEYS.contains(&k.as_str()) {
        true => (k, v),
        false => {
            let v = config_jinja.render(v);
            (k, v)
        }
    }
}

/// A model's hook config keys, as dbt spells them in `config()` and YAML.
pub(crate) const HOOK_KEYS: [&str; 4] = ["pre_hook", "post_hook", "pre-hook", "post-hook"];

/// The SQL of a hook config value: a string, a list of them, or
/// `{"sql": ..., "transaction": ...}` entries.
fn hook_texts(v: Option<&Value>) -> Vec<&str> {
    match v {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(items)) => items.iter().flat_map(|i| hook_texts(Some(i))).collect(),
        Some(Value::Object(m)) => hook_texts(m.get("sql")),
        _ => Vec::new(),
    }
}

/// Renders one model or snapshot into its dataset and job; `kept`: for the
/// warm cache's snapshot, which keeps [`Slot::named`].
fn render_template(
    renderer: &Renderer,
    t: Template,
    this: Relation,
    config: &Config,
    kept: bool,
) -> Rendered {
    let mut diagnostics = Vec::new();
    let hook_this = this.clone();
    let (result, capture) =
        renderer.render_in(t.package.as_deref(), &t.file, &t.text, this, &t.name);
    if let Err(e) = &result {
        let line = if e.line > 0 {
            t.first_line + e.line - 1
        } else {
            0
        };
        diagnostics.push(Diagnostic::error(
            "render-error",
            Some(t.file.clone()),
            line,
            0,
            format!("{}; edges found before the error are kept", e.message),
        ));
    }
    let mut sql = result.ok();
    if let Some(findings) = &t.python {
        // Python, not SQL: its edges are its refs and sources.
        diagnostics.extend(findings.iter().cloned());
        sql = None;
    }
    // Statements are at most the semicolons and one: the scanner (which
    // knows quotes and comments) only runs when there may be too many, a
    // byte count costing nothing on the usual model.
    if let Some(n) = sql
        .as_deref()
        .filter(|text| text.bytes().filter(|&b| b == b';').count() >= MAX_MODEL_STATEMENTS)
        .map(|text| crate::sql::statement_count(text, config.dialect))
        .filter(|&n| n > MAX_MODEL_STATEMENTS)
    {
        diagnostics.push(Diagnostic::error(
            "too-many-statements",
            Some(t.file.clone()),
            t.first_line,
            0,
            format!(
                "`{}` renders {n} SQL statements (the limit is {MAX_MODEL_STATEMENTS}; dbt runs a model as one statement): its SQL is not read, its edges are its refs and sources. Is a loop repeating a statement?",
                t.name
            ),
        ));
        sql = None;
    }
    let mut unknown = capture.unknown.into_inner().unwrap_or_default();
    // A placeholder printed without a call (`{{ modules.os }}`, an unknown
    // attribute) names nothing to warn of: the rendered text says it.
    // Looked for only when nothing else warned: this runs for every model.
    let printed = || {
        sql.as_deref().is_some_and(|s| s.contains(PLACEHOLDER))
            || capture
                .config
                .lock()
                .is_ok_and(|c| c.values().any(|v| v.to_string().contains(PLACEHOLDER)))
    };
    if unknown.is_empty() && printed() {
        unknown.insert("a value ripple's Jinja does not have".to_string());
    }
    let clock = capture.clock.into_inner().unwrap_or_default();
    let guessed = !unknown.is_empty() || !clock.is_empty();
    for name in clock {
        let line = t
            .text
            .find(name.trim_end_matches("()"))
            .map_or(0, |at| t.first_line + line_of(&t.text, at) - 1);
        diagnostics.push(Diagnostic::warning(
            "reads-clock",
            Some(t.file.clone()),
            line,
            0,
            format!("`{name}` reads the run's clock: ripple answers dbt's `run_started_at`, fixed at 2000-01-01 00:00:00 UTC, so what the model computes from it (a date filter, a config) is ripple's, not a real run's; configs computed from it count as unknown"),
        ));
    }
    for name in unknown {
        let line = t
            .text
            .find(name.trim_end_matches("()").trim_start_matches('.'))
            .map_or(0, |at| t.first_line + line_of(&t.text, at) - 1);
        diagnostics.push(Diagnostic::warning(
            "unknown-macro",
            Some(t.file.clone()),
            line,
            0,
            if name.starts_with("a value ") {
                format!("{name} (another Python module, an unknown attribute) is rendered as `{PLACEHOLDER}`: what the model computes from it is unknown, so name dbt's manifest (`--manifest`) if its edges depend on it")
            } else if name.starts_with('.') {
                format!("the method `{name}` is not available in ripple's Jinja; rendered as `{PLACEHOLDER}`")
            } else if name.starts_with("modules.") {
                // dbt's Python modules (`modules.datetime`, `modules.re`,
                // `modules.pytz`): no package provides them.
                format!("`{name}` (a Python module dbt provides) is not available in ripple's Jinja; rendered as `{PLACEHOLDER}`: what the model computes from it is unknown, so name dbt's manifest (`--manifest`) if its edges depend on it")
            } else {
                format!("`{name}` is not defined here; rendered as `{PLACEHOLDER}` (install the package under dbt_packages/ to resolve it)")
            },
        ));
    }
    // The model's own warehouse calls name it best; else those of the
    // macros it called.
    let own = jinja::warehouse_calls(&t.text);
    let needs_warehouse: Vec<String> = if own.is_empty() {
        capture
            .warehouse
            .into_inner()
            .unwrap_or_default()
            .into_iter()
            .collect()
    } else {
        own.iter().map(|c| format!("`{c}`")).collect()
    };
    if !needs_warehouse.is_empty() {
        let line = own
            .first()
            .and_then(|c| t.text.find(c.as_str()))
            .map_or(t.first_line, |at| t.first_line + line_of(&t.text, at) - 1);
        diagnostics.push(Diagnostic::warning(
            "needs-warehouse",
            Some(t.file.clone()),
            line,
            0,
            format!(
                "`{}` asks the warehouse ({}): what it reads may depend on data no static reader sees, so its edges are those ripple could render; name dbt's manifest (`--manifest target/manifest.json`, from `dbt parse`) to take its dependencies from dbt",
                t.name,
                needs_warehouse.join(", ")
            ),
        ));
    }
    let mut cfg = t.config;
    for (k, mut v) in capture.config.into_inner().unwrap_or_default() {
        // A placeholder compares and tests as some fixed value, so a
        // `full_refresh` computed where one was rendered is unknown (a
        // plan must not take `(modules.datetime... < 1990)` for `true`).
        if guessed && k == "full_refresh" && !v.is_null() {
            v = serde_json::Value::String(PLACEHOLDER.to_string());
        }
        merge_config(&mut cfg, &k, v);
    }
    let relation = final_relation(
        renderer,
        &default_settings(config),
        &cfg,
        &t.name,
        t.kind,
        &t.node,
    );
    // A name config whose Jinja did not render (kept as written) or that
    // holds a placeholder names no relation dbt would: the model's table is
    // unknown, and a plan must not address a made-up one.
    for key in [
        "alias",
        "schema",
        "database",
        "target_schema",
        "target_database",
    ] {
        let Some(v) = cfg.get(key).and_then(Value::as_str) else {
            continue;
        };
        if jinja::holds_jinja(v) || v.contains(PLACEHOLDER) {
            let shown: String = v.chars().take(120).collect();
            diagnostics.push(Diagnostic::error(
                "render-error",
                Some(t.file.clone()),
                t.first_line,
                0,
                format!(
                    "`{}`'s `{key}` (`{shown}`) did not render to a name, so the table it builds is unknown; fix the value (ripple renders `var`, `env_var`, `target` and `modules` in it)",
                    t.name
                ),
            ));
        }
    }
    // dbt records the refs and sources of a model's hooks as its
    // dependencies (a pre-hook copying a source before the build): an
    // impact from that source reaches the model.
    let mut hooked = Vec::new();
    for key in HOOK_KEYS {
        for text in hook_texts(cfg.get(key)) {
            if jinja::holds_jinja(text) && (text.contains("ref") || text.contains("source")) {
                let (_, cap) = renderer.render_in(
                    t.package.as_deref(),
                    &t.file,
                    text,
                    hook_this.clone(),
                    &t.name,
                );
                hooked.extend(cap.references.into_inner().unwrap_or_default());
            }
        }
    }
    let mut seen = BTreeSet::new();
    let reads: Vec<Reference> = capture
        .references
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .chain(hooked)
        .filter(|target| seen.insert(target.clone()))
        .map(|target| {
            let needle = match &target {
                Target::Ref { name, .. } => name.clone(),
                Target::Source { table, .. } => table.clone(),
                _ => String::new(),
            };
            let line = find_quoted(&t.text, &needle)
                .map_or(0, |at| t.first_line + line_of(&t.text, at) - 1);
            Reference { target, line }
        })
        .collect();
    // `{{ this }}` (usually in the incremental branch, which renders false)
    // is recorded as a read of the model itself: the graph keeps it as a
    // self-read, not an edge, for impact analysis to see.
    let mut reads = reads;
    if let Some(at) = this_reference(&t.text) {
        reads.push(Reference {
            target: Target::Node { id: t.id.clone() },
            line: t.first_line + line_of(&t.text, at) - 1,
        });
    }
    let named = sql.as_deref().filter(|_| kept).map_or(0, |sql| {
        let mut printed = capture.printed.into_inner().unwrap_or_default();
        printed.push(relation.clone());
        crate::sql::hard_coded::unexplained_digest(sql, &printed)
    });
    let job = Job {
        id: t.id.clone(),
        kind: JobKind::Dbt,
        file: t.file.clone(),
        reads,
        writes: vec![Reference {
            target: Target::Node { id: t.id.clone() },
            line: t.first_line,
        }],
        feeds: None,
        sql: sql.map(Into::into),
        airflow: None,
        built_by: None,
        needs_warehouse,
        from_manifest: BTreeSet::new(),
    };
    let mut ds = dataset(
        t.id,
        t.kind,
        t.name,
        relation,
        t.package,
        t.file,
        t.first_line,
        cfg,
        t.columns,
    );
    ds.tests = t.tests;
    Rendered {
        dataset: ds,
        job,
        diagnostics,
        named,
    }
}

/// A model or snapshot rendered.
struct Rendered {
    dataset: Dataset,
    job: Job,
    diagnostics: Vec<Diagnostic>,
    /// See [`Slot::named`].
    named: u64,
}

/// Where the first Jinja tag naming `this` starts, if any.
fn this_reference(text: &str) -> Option<usize> {
    jinja::tags(text).find_map(|(tag, at)| {
        let words = tag.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'));
        words
            .into_iter()
            .any(|w| w == "this" || w.starts_with("this."))
            .then_some(at)
    })
}

fn find_quoted(text: &str, needle: &str) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    text.find(&format!("'{needle}'"))
        .or_else(|| text.find(&format!("\"{needle}\"")))
}

#[allow(clippy::too_many_arguments)]
fn dataset(
    id: String,
    kind: DatasetKind,
    name: String,
    relation: String,
    package: Option<String>,
    file: String,
    line: u32,
    mut config: Map<String, Value>,
    columns: Vec<String>,
) -> Dataset {
    let mut tags = config
        .remove("tags")
        .map(|t| yaml::strings(&t))
        .unwrap_or_default();
    tags.sort();
    tags.dedup();
    Dataset {
        id,
        kind,
        name,
        relation,
        package,
        file: Some(file),
        line: Some(line),
        tags,
        columns,
        config: config.into_iter().collect(),
        tests: false,
    }
}
