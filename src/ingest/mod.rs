//! Readers: one per input format, each turning files into a
//! [`crate::project::Part`] of the [`Project`]. [`load_project`] detects what a folder holds and joins the
//! parts; they meet on dataset names when the graph is built.

pub mod airflow;
mod catalog;
mod dbt;
pub(crate) mod files;
mod manifest;
mod python;
pub mod revision;
mod schema_file;
mod sql_files;
mod tables;

use std::path::{Path, PathBuf};

use crate::config::{CONFIG_FILE, Config};
use crate::error::Result;
use crate::project::{Dataset, Diagnostic, Project};

pub use airflow::{Dags, read_dags};
pub(crate) use dbt::CONTRACT_COLUMNS as DBT_CONTRACT_COLUMNS;
pub(crate) use dbt::HOOK_KEYS as DBT_HOOK_KEYS;
pub use dbt::NAME_MACROS as DBT_NAME_MACROS;
pub(crate) use dbt::jinja::ADAPTER_WRITES as DBT_ADAPTER_WRITES;
pub(crate) use dbt::jinja::branch_text as dbt_branch_text;
pub(crate) use dbt::jinja::macro_blocks as dbt_macro_blocks;
pub use schema_file::read_schema;
pub use tables::{TablesError, load_tables};

/// Reports progress of long loads (the CLI draws a bar); every method has
/// a do-nothing default.
pub trait Progress: Sync {
    /// `total` units of work are about to start.
    fn start(&self, _total: u64) {}
    /// `n` more units are done.
    fn inc(&self, _n: u64) {}
    /// All done.
    fn finish(&self) {}
}

/// A [`Progress`] that reports nothing.
pub struct NoProgress;

impl Progress for NoProgress {}

/// How to load a project.
pub struct LoadOptions<'a> {
    /// A dbt `manifest.json` to read, overriding `ripple.yml`'s `manifest`.
    pub manifest: Option<PathBuf>,
    /// Where progress goes.
    pub progress: &'a dyn Progress,
    /// The warm cache's folder (docs/cache.md); `None` works everything
    /// out again.
    pub cache: Option<PathBuf>,
    /// Whether the caller may answer from the lineage alone
    /// ([`open_project`]): a dbt snapshot's models are then read only when
    /// the project is asked for. Otherwise they are read while the files
    /// are checked, on the other core.
    pub lazy: bool,
}

impl Default for LoadOptions<'_> {
    fn default() -> Self {
        LoadOptions {
            manifest: None,
            progress: &NoProgress,
            cache: None,
            lazy: false,
        }
    }
}

/// Reads the project at `root`: `ripple.yml`, a dbt project, a manifest,
/// plain SQL folders. Only a broken `ripple.yml` or an unreadable root is an
/// error; problems in single files become diagnostics and the rest loads.
pub fn load_project(root: &Path, options: &LoadOptions) -> Result<Project> {
    Ok(open_project(root, options)?.load())
}

/// A project read as far as its lineage digest: a run that can answer from
/// the digest alone (a kept graph) asks no more of it; [`OpenProject::load`]
/// reads the rest.
pub struct OpenProject {
    /// Everything read but the dbt part.
    project: Project,
    /// The dbt part, first of the parts (as it was read first).
    dbt: Option<dbt::DbtPart>,
    /// The other parts, in the order they were read.
    later: Vec<crate::project::Part>,
    config: Config,
    catalog: Option<PathBuf>,
}

impl OpenProject {
    /// The digest of what the project's lineage graph is made of, when the
    /// warm cache can tell it ([`Project::lineage`]).
    pub fn lineage(&self) -> Option<&crate::project::Lineage> {
        self.project.lineage.as_ref()
    }

    /// The project's warm cache.
    pub fn cache(&self) -> &std::sync::Arc<crate::cache::Cache> {
        &self.project.cache
    }

    /// The whole project.
    pub fn load(self) -> Project {
        let OpenProject {
            mut project,
            dbt,
            later,
            config,
            catalog,
        } = self;
        let root = project.root.clone();
        if let Some(part) = dbt {
            let part = match part {
                kept @ dbt::DbtPart::Kept(_) => {
                    crate::timings::phase("dbt models (kept models read)", || {
                        kept.into_part(&root, &config, &project.cache)
                    })
                }
                ready => ready.into_part(&root, &config, &project.cache),
            };
            project.add(part);
        }
        for part in later {
            project.add(part);
        }
        project.config = config;
        dedup_datasets(&mut project.datasets, &mut project.diagnostics);
        airflow::link_dbt(&mut project);
        if let Some(path) = catalog {
            catalog::apply(
                &root,
                &path,
                &mut project.datasets,
                &mut project.diagnostics,
            );
        }
        project.jobs.sort_by(|a, b| a.id.cmp(&b.id));
        project.jobs.dedup_by(|a, b| a.id == b.id);
        project.diagnostics.sort();
        project
    }
}

/// [`load_project`] as far as the lineage digest: see [`OpenProject`].
pub fn open_project(root: &Path, options: &LoadOptions) -> Result<OpenProject> {
    // Rendering needs threads with deep stacks (jinja/guard.rs): made now,
    // before anything starts rayon's pool.
    dbt::jinja::guard::render_threads();
    // A working folder deleted under the run still reads as a folder,
    // an empty one: the project seen whole would be nothing, exit 0.
    if !root.is_dir() || std::fs::canonicalize(root).is_err() {
        return Err(crate::Error::Io {
            path: root.to_path_buf(),
            source: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "not a folder (or one deleted under the run)",
            ),
        });
    }
    use crate::timings::phase;
    let config = phase("ripple.yml", || Config::load(root))?;
    let cache = std::sync::Arc::new(match &options.cache {
        Some(dir) => crate::cache::Cache::open(dir.clone()),
        None => crate::cache::Cache::off(),
    });
    let mut project = Project {
        root: root.to_path_buf(),
        cache,
        ..Project::default()
    };
    let is_dbt = dbt::is_dbt_project(root);
    // The dbt part's lineage digest, while nothing else is read.
    let mut lineage = None;
    let mut dbt_part = None;
    if is_dbt {
        let started = std::time::Instant::now();
        let (part, how) = dbt::load(root, &config, options, &project.cache);
        crate::timings::record(how.phase(), started.elapsed());
        dbt_part = Some(part);
        lineage = how.lineage();
    }
    // Paths ripple.yml names stay inside the project; `--manifest` on the
    // command line is the user's own choice.
    let mut refused = Vec::new();
    let allow = config.allow_outside_project;
    let mut confine = |paths: &[PathBuf], key: &str| -> Vec<PathBuf> {
        let paths = paths.iter().map(PathBuf::as_path);
        files::confine(root, root, paths, allow, (CONFIG_FILE, key), &mut refused)
    };
    let manifest = confine(config.manifest.as_slice(), "manifest");
    let sql = confine(&config.sql, "sql");
    let models = confine(&config.models, "models");
    let dags = confine(&config.dags, "dags");
    let catalog = confine(config.catalog.as_slice(), "catalog");
    // A folder ripple.yml names that is not there would leave its part of
    // the pipeline out without a word (a typo in `sql:` once hid a job
    // from impact with exit 0).
    // ripple.yml is read again for the setting's line only when a folder
    // is missing, not on every run.
    let mut config_text: Option<String> = None;
    for (key, paths) in [("sql", &sql), ("models", &models), ("dags", &dags)] {
        for path in paths.iter().filter(|p| !p.exists()) {
            let line = config_text
                .get_or_insert_with(|| {
                    std::fs::read_to_string(root.join(CONFIG_FILE)).unwrap_or_default()
                })
                .lines()
                .position(|l| l.trim_start().starts_with(&format!("{key}:")))
                .map_or(0, |i| u32::try_from(i + 1).unwrap_or(0));
            refused.push(Diagnostic::error(
                "missing-path",
                Some(CONFIG_FILE.to_string()),
                line,
                0,
                format!(
                    "`{key}` names `{}`, which does not exist: nothing is read from it; fix the path or remove it",
                    crate::text::one_line(&path.strip_prefix(root).unwrap_or(path).display().to_string())
                ),
            ));
        }
    }
    if !refused.is_empty() {
        lineage = None;
    }
    project.diagnostics.extend(refused);
    if let Some(path) = options.manifest.clone().or(manifest.into_iter().next()) {
        lineage = None;
        let part = phase("manifest", || manifest::load(root, &path));
        if is_dbt {
            // The manifest fills in the dbt part's jobs: it is read now.
            if let Some(dbt) = dbt_part.take() {
                project.add(dbt.into_part(root, &config, &project.cache));
            }
            fill_from_manifest(&mut project, part);
        } else {
            project.add(part);
        }
    }
    let models = (!config.models.is_empty()).then_some(models);
    let sql_dirs = sql_folders(root, &sql, models.as_deref(), is_dbt);
    let excluded: Vec<PathBuf> = if config.dags.is_empty() {
        vec![root.join(crate::config::DEFAULT_DAGS)]
    } else {
        dags
    };
    let mut sql_paths: Vec<PathBuf> = Vec::new();
    for d in &sql_dirs {
        let found = files::walk(root, d, &[".sql"]);
        sql_paths.extend(
            found
                .files
                .into_iter()
                .filter(|p| !excluded.iter().any(|x| p.starts_with(x))),
        );
        if !found.problems.is_empty() {
            lineage = None;
        }
        project.diagnostics.extend(found.problems);
    }
    // The digest speaks for the dbt part alone: anything else read (SQL
    // files, DAG files, a catalog) is not in it.
    let mut later = Vec::new();
    let others = [
        phase("sql files", || {
            sql_files::load(root, &sql_paths, config.dialect)
        }),
        phase("airflow dags", || {
            airflow::load(root, &excluded, config.dialect)
        }),
    ];
    for part in others {
        if !(part.datasets.is_empty()
            && part.jobs.is_empty()
            && part.diagnostics.is_empty()
            && part.dags.is_empty()
            && part.dbt_root.is_none())
        {
            lineage = None;
        }
        later.push(part);
    }
    if !catalog.is_empty() {
        lineage = None;
    }
    // What ripple.yml says shapes the graph too (its datasets' settings,
    // the dialect): in the digest whole.
    let settings = format!("{config:?}");
    let bind = |k: crate::cache::Key| {
        crate::cache::KeyBuilder::default()
            .str("project lineage")
            .key(k)
            .str(&settings)
            .str(&root.to_string_lossy())
            .finish()
    };
    project.lineage = lineage.map(|l| crate::project::Lineage {
        key: bind(l.key),
        base: bind(l.base),
        edits: l.edits,
    });
    Ok(OpenProject {
        project,
        dbt: dbt_part,
        later,
        config,
        catalog: catalog.into_iter().next(),
    })
}

/// Beside a dbt project ripple renders itself, dbt's manifest is evidence,
/// not a second project: each model also reads what the manifest says it
/// depends on (what dbt saw when it could ask the warehouse, or what
/// rendering missed), marked as coming from the manifest. The manifest's
/// own nodes are not added.
fn fill_from_manifest(project: &mut Project, manifest: crate::project::Part) {
    let by_id: std::collections::HashMap<&str, &crate::project::Job> =
        manifest.jobs.iter().map(|j| (j.id.as_str(), j)).collect();
    for job in &mut project.jobs {
        let Some(from) = by_id.get(job.id.as_str()) else {
            continue;
        };
        for read in &from.reads {
            if !job.reads.iter().any(|r| r.target == read.target) {
                job.from_manifest.insert(read.target.clone());
                job.reads.push(read.clone());
            }
        }
    }
    project.diagnostics.extend(manifest.diagnostics);
}

/// Folders of plain SQL jobs: `sql:` always; outside dbt, `models:` or else
/// the whole project.
fn sql_folders(
    root: &Path,
    sql: &[PathBuf],
    models: Option<&[PathBuf]>,
    is_dbt: bool,
) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = sql.to_vec();
    if !is_dbt {
        match models {
            Some(models) => dirs.extend(models.iter().cloned()),
            None => dirs.push(root.to_path_buf()),
        }
    }
    dirs.sort();
    dirs.dedup();
    dirs
}

/// One dataset per id: the first wins, later ones are reported.
fn dedup_datasets(datasets: &mut Vec<Dataset>, diagnostics: &mut Vec<Diagnostic>) {
    // Most projects come sorted with each id once: nothing to move.
    if datasets.windows(2).all(|w| w[0].id < w[1].id) {
        return;
    }
    // The root project's first: dbt resolves a root model's `ref('m')` to
    // the root's `m` when a package has one too (the package's was kept,
    // being first by file name).
    datasets.sort_by(|a, b| {
        a.id.cmp(&b.id)
            .then_with(|| a.package.is_some().cmp(&b.package.is_some()))
            .then_with(|| a.file.cmp(&b.file))
    });
    let mut kept: Vec<Dataset> = Vec::with_capacity(datasets.len());
    for d in datasets.drain(..) {
        match kept.last() {
            Some(prev) if prev.id == d.id && prev.package.is_none() && d.package.is_some() => {
                diagnostics.push(Diagnostic::warning(
                    "duplicate-dataset",
                    d.file.clone(),
                    d.line.unwrap_or(0),
                    0,
                    format!(
                        "`{}` of package `{}` has the name of the root project's model in {}; ripple keeps the root project's, as dbt's `ref()` from the root resolves to it, and leaves the package's out of the graph",
                        d.id,
                        d.package.as_deref().unwrap_or_default(),
                        prev.file.as_deref().unwrap_or("another input")
                    ),
                ));
            }
            Some(prev) if prev.id == d.id => diagnostics.push(Diagnostic::error(
                "duplicate-dataset",
                d.file.clone(),
                d.line.unwrap_or(0),
                0,
                format!(
                    "`{}` is also defined in {}; rename one of them",
                    d.id,
                    prev.file.as_deref().unwrap_or("another input")
                ),
            )),
            _ => kept.push(d),
        }
    }
    *datasets = kept;
}
