//! `ripple.yml`: the project's own settings, all optional. Every key is
//! documented in `docs/config.md`; an unknown key or a wrong type is an error
//! naming the key path, its line and column, and the closest valid key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::sql::SqlDialect;
use crate::text::did_you_mean;
use crate::time::{Grain, TimeMapping};

/// The file name ripple looks for at the project root.
pub const CONFIG_FILE: &str = "ripple.yml";

/// The DAG folder read when ripple.yml names none.
pub const DEFAULT_DAGS: &str = "dags";

/// The settings of one project.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// SQL dialect of the project's SQL (default: generic).
    #[serde(deserialize_with = "dialect")]
    pub dialect: SqlDialect,
    /// Folders of SQL models. In a dbt project, dbt's `model-paths` are used
    /// when this is empty; elsewhere, each `.sql` file here is a job.
    pub models: Vec<PathBuf>,
    /// Extra folders of plain SQL scripts, read as jobs even in a dbt project.
    pub sql: Vec<PathBuf>,
    /// Folders of Airflow DAG files (none: [`DEFAULT_DAGS`]).
    pub dags: Vec<PathBuf>,
    /// A dbt `manifest.json` to read (relative to the project root).
    pub manifest: Option<PathBuf>,
    /// A dbt `catalog.json` (`dbt docs generate`): the warehouse's columns
    /// of models and sources, for column lineage.
    pub catalog: Option<PathBuf>,
    /// Files of table facts for plans: the lines `ripple tables` writes
    /// (`.jsonl`), or DDL (`.sql`, or folders of them).
    pub tables: Vec<PathBuf>,
    /// Where dbt models are built, for their relation names.
    pub target: TargetConfig,
    /// dbt `vars`, overriding those of `dbt_project.yml`.
    pub vars: BTreeMap<String, serde_json::Value>,
    /// Per-dataset settings, keyed by dataset name (model name, relation or
    /// node id).
    pub datasets: BTreeMap<String, DatasetConfig>,
    /// How backfills are run.
    pub backfill: BackfillConfig,
    /// Names in OpenLineage events (`ripple graph --format openlineage`).
    pub openlineage: OpenLineageConfig,
    /// Read folders and files that configuration places outside the project
    /// (`../shared/models`, `/srv/dags`). Off: such paths are refused, so a
    /// pull request cannot make ripple read `/etc`.
    pub allow_outside_project: bool,
    /// The time zone partitions are days (and weeks, months) of, for
    /// every dataset that names none (default: UTC).
    pub time_zone: Option<String>,
    /// Where the file writes each `datasets:` key and each of their
    /// `upstream:` keys, for errors about what those keys name (the graph
    /// checks them: `impact::TimeFacts`).
    #[serde(skip)]
    pub places: KeyPlaces,
}

/// Where `ripple.yml` writes each `datasets:` key and each of their
/// `upstream:` keys: the file, and a line and column per key. Not a
/// setting: two configs that differ only here are equal.
#[derive(Debug, Clone, Default)]
pub struct KeyPlaces {
    /// The file (none when the settings were not read from one).
    file: Option<PathBuf>,
    /// (line, column) of each `datasets:` key.
    datasets: BTreeMap<String, (u32, u32)>,
    /// (line, column) of each `upstream:` key, by (dataset key, upstream key).
    upstream: BTreeMap<(String, String), (u32, u32)>,
}

impl PartialEq for KeyPlaces {
    fn eq(&self, _: &KeyPlaces) -> bool {
        true
    }
}

impl KeyPlaces {
    /// The places of the keys of `text`, a `ripple.yml` that parsed; none
    /// when it cannot be read again (it always can).
    fn read(text: &str, path: &Path) -> KeyPlaces {
        let keys: KeysOnly = serde_saphyr::from_str_with_options(text, yaml_options())
            .ok()
            .flatten()
            .unwrap_or_default();
        let at = |s: &serde_saphyr::Spanned<String>| {
            let l = s.referenced;
            (l.line() as u32, l.column() as u32)
        };
        let mut places = KeyPlaces {
            file: Some(path.to_path_buf()),
            ..KeyPlaces::default()
        };
        for (dataset, entry) in keys.datasets.0 {
            for (up, _) in entry.upstream.0 {
                places
                    .upstream
                    .insert((dataset.value.clone(), up.value.clone()), at(&up));
            }
            places.datasets.insert(dataset.value.clone(), at(&dataset));
        }
        places
    }

    /// (line, column) of `datasets.<dataset>`, or with `upstream` of its
    /// `upstream.<upstream>`; (0, 0) when unknown.
    pub fn line_column(&self, dataset: &str, upstream: Option<&str>) -> (u32, u32) {
        let found = match upstream {
            None => self.datasets.get(dataset),
            Some(up) => self.upstream.get(&(dataset.to_string(), up.to_string())),
        };
        found.copied().unwrap_or((0, 0))
    }

    /// `path:line:column` of a place, as errors name one; the file alone
    /// when the line is unknown.
    pub fn at(&self, (line, column): (u32, u32)) -> String {
        let file = self
            .file
            .as_deref()
            .unwrap_or(Path::new(CONFIG_FILE))
            .display();
        match line {
            0 => file.to_string(),
            _ => format!("{file}:{line}:{column}"),
        }
    }
}

/// The keys of `datasets:` and their `upstream:` keys, with their places.
#[derive(Default, Deserialize)]
#[serde(default)]
struct KeysOnly {
    datasets: SpannedKeys<UpstreamKeys>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct UpstreamKeys {
    upstream: SpannedKeys<serde::de::IgnoredAny>,
}

/// A mapping's entries, each key with where it is written.
struct SpannedKeys<T>(Vec<(serde_saphyr::Spanned<String>, T)>);

impl<T> Default for SpannedKeys<T> {
    fn default() -> Self {
        SpannedKeys(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for SpannedKeys<T> {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> std::result::Result<Self, D::Error> {
        struct Entries<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Entries<T> {
            type Value = SpannedKeys<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a mapping")
            }
            fn visit_unit<E>(self) -> std::result::Result<Self::Value, E> {
                Ok(SpannedKeys::default())
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    out.push(entry);
                }
                Ok(SpannedKeys(out))
            }
        }
        de.deserialize_any(Entries(std::marker::PhantomData))
    }
}

/// The dbt target ripple assumes (there is no `profiles.yml` to read).
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TargetConfig {
    /// The target schema (dbt's `target.schema`).
    pub schema: String,
    /// The target database, left out of relation names when unset.
    pub database: Option<String>,
    /// The target name (dbt's `target.name`).
    pub name: String,
}

impl Default for TargetConfig {
    fn default() -> Self {
        TargetConfig {
            schema: "analytics".to_string(),
            database: None,
            name: "prod".to_string(),
        }
    }
}

/// Settings for one dataset.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DatasetConfig {
    /// Partitioning grain.
    pub grain: Option<Grain>,
    /// The first partition that exists (ISO date or hour).
    pub start: Option<String>,
    /// Time mappings of edges from upstream datasets, keyed by upstream name.
    #[serde(deserialize_with = "mappings")]
    pub upstream: BTreeMap<String, TimeMapping>,
    /// A validation query run on every backfilled batch.
    pub validate: Option<String>,
    /// Relative cost of one partition.
    pub cost: Option<f64>,
    /// Columns that identify a row.
    pub unique_key: Vec<String>,
    /// The column a partition is selected by (default: dbt's `event_time`
    /// or `partition_by.field`), for batch filters and partition swaps.
    pub partition_column: Option<String>,
    /// How the partition column stores its key (default: a date or
    /// timestamp): `int_yyyymmdd`, `text_yyyymmdd`, `text_yyyy_mm`,
    /// `epoch_seconds`, `epoch_millis`.
    pub partition_format: Option<crate::time::KeyFormat>,
    /// The time zone its partitions are days of (an IANA name).
    pub time_zone: Option<String>,
    /// At most this many tasks of this dataset at once.
    pub max_concurrency: Option<u32>,
    /// Its job, reading the table it writes, rebuilds the whole table when
    /// run once into an empty one (it reads itself only to skip what it
    /// holds): a plan may then rebuild it. Unset, such a plan is refused.
    pub rebuilds_from_empty: bool,
    /// The built-in validations, turned off or retuned for this dataset.
    pub checks: Checks,
}

/// The built-in validations of a backfill: each can be turned off (and the
/// row-count rule retuned) for the whole plan under `backfill:` or per
/// dataset; a dataset's setting wins.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Checks {
    /// The shadow is not empty where production is not (default on).
    pub non_empty: Option<bool>,
    /// The shadow's rows within this fraction of production's for the same
    /// partitions (default 0.1); `false` turns it off. A partition empty in
    /// production (late data) always passes.
    pub row_count: Option<RowCount>,
    /// No two rows share the unique key, when one is known (default on).
    pub unique_key: Option<bool>,
}

/// The row-count rule as written: `false`/`true`, or a tolerance.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum RowCount {
    /// On (with the default tolerance) or off.
    Enabled(bool),
    /// On, with this tolerance (a fraction of production's count, 0 or more).
    Tolerance(f64),
}

/// How a dataset's shadow replaces production.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SwapMode {
    /// Production's rows are replaced inside one transaction (delete, then
    /// insert by column name): views, grants and constraints on it survive.
    #[default]
    InPlace,
    /// The shadow is renamed into production's place (the old table
    /// dropped): fast on huge tables, but dependents of the old table
    /// (views, grants) do not follow it.
    Rename,
}

/// Names in OpenLineage events, per the OpenLineage naming spec.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OpenLineageConfig {
    /// The warehouse's dataset namespace (`postgres://db.example.com:5432`,
    /// `snowflake://org-account`, `bigquery`).
    pub namespace: Option<String>,
    /// The namespace of the jobs (default `ripple`).
    pub job_namespace: Option<String>,
    /// The `producer` URI of every event (default `urn:ripple:<version>`).
    pub producer: Option<String>,
}

/// How backfills are run.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BackfillConfig {
    /// Partitions per batch, per grain.
    pub batch: BTreeMap<Grain, u32>,
    /// Tasks running at once, at most.
    pub max_concurrency: Option<u32>,
    /// Allowed windows, `HH:MM-HH:MM` (UTC).
    pub windows: Vec<String>,
    /// Production runs to stay clear of.
    pub production: Vec<ProductionRun>,
    /// Shadow relation pattern, e.g. `{schema}.{table}__backfill`.
    pub shadow: Option<String>,
    /// How shadows replace production (default `in_place`).
    pub swap: SwapMode,
    /// Keep the shadows after a successful swap (default: dropped).
    pub keep_shadows: bool,
    /// The built-in validations for every dataset.
    pub checks: Checks,
}

/// A production run that is a blackout window for backfills.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProductionRun {
    /// The Airflow DAG (or any name).
    pub dag: String,
    /// Its schedule, as a cron expression.
    pub cron: String,
    /// How long it runs (`90m`, `2h`; empty: 60 minutes).
    #[serde(default)]
    pub duration: String,
}

impl Config {
    /// The time zone of `settings`' dataset: its own, the project's, or
    /// none (UTC).
    pub fn zone_of<'a>(&'a self, settings: Option<&'a DatasetConfig>) -> Option<&'a str> {
        settings
            .and_then(|s| s.time_zone.as_deref())
            .or(self.time_zone.as_deref())
    }

    /// Reads `ripple.yml` from `root`; the defaults when there is none.
    pub fn load(root: &Path) -> Result<Config> {
        let path = root.join(CONFIG_FILE);
        if !path.is_file() {
            // Nothing there is no config; something there that is not a
            // file (a folder, a link to nothing: a shared config not
            // checked out) is not silently none.
            if let Ok(m) = std::fs::symlink_metadata(&path) {
                let what = if m.is_dir() {
                    "a folder"
                } else if m.file_type().is_symlink() {
                    "a link to nothing"
                } else {
                    "not a file"
                };
                return Err(Error::Io {
                    path: path.clone(),
                    source: std::io::Error::other(format!(
                        "it is {what}; make it the file, or remove it to plan without one"
                    )),
                });
            }
            return Ok(Config::default());
        }
        crate::input::settings_inside(root, &path)?;
        let text = crate::input::read_text(&path)?;
        Config::parse(&text, &path)
    }

    /// Parses the text of a `ripple.yml`; `path` is used in error messages.
    pub fn parse(text: &str, path: &Path) -> Result<Config> {
        let mut key_path = String::new();
        let parsed =
            serde_saphyr::with_deserializer_from_str_with_options(text, yaml_options(), |de| {
                serde_path_to_error::deserialize(de).map_err(|e| {
                    // A key the path cannot name (a map keyed by an enum,
                    // a duplicated key) prints as `?`: left out, the line
                    // and column say where.
                    use serde_path_to_error::Segment;
                    for s in e.path().iter() {
                        match s {
                            Segment::Unknown => {}
                            Segment::Seq { index } => key_path.push_str(&format!("[{index}]")),
                            other => {
                                if !key_path.is_empty() {
                                    key_path.push('.');
                                }
                                key_path.push_str(&other.to_string());
                            }
                        }
                    }
                    e.into_inner()
                })
            });
        // An empty file deserializes as "no document": the defaults.
        if text.trim().is_empty() {
            return Ok(Config::default());
        }
        let mut config: Config = parsed.map_err(|e| {
            let error = config_error(path, &key_path, &e);
            tab_indent_before(text, path, &error).unwrap_or(error)
        })?;
        config.places = KeyPlaces::read(text, path);
        if let Some(bad) = config.bad_value() {
            let (line, column) = bad.place(text, &config.places);
            return Err(Error::Config {
                path: path.to_path_buf(),
                line,
                column,
                message: format!("{}: {}", bad.key, bad.message),
            });
        }
        Ok(config)
    }

    /// The first setting whose value parses but makes no sense (an infinite
    /// cost, a batch of 0 partitions, a concurrency of 0, a window of a
    /// million partitions): its key path and what to write instead.
    fn bad_value(&self) -> Option<BadValue> {
        let tolerance = |key: String, c: &Checks| match c.row_count {
            // 1 or more would let every row go: a check that cannot fail.
            Some(RowCount::Tolerance(x)) if !(0.0..1.0).contains(&x) => Some(BadValue::new(
                format!("{key}.checks.row_count"),
                format!(
                    "{x} is not a fraction from 0 to below 1 (the share of production's rows a partition may lose); write e.g. 0.25, or false to turn the check off"
                ),
            )),
            _ => None,
        };
        let zone = |key: String, z: &Option<String>| {
            z.as_deref()
                .filter(|z| jiff::tz::TimeZone::get(z).is_err())
                .map(|z| {
                    BadValue::new(
                        key,
                        format!("`{z}` is not a time zone ripple knows; write an IANA name such as Europe/Paris or UTC"),
                    )
                })
        };
        if let Some(bad) = zone("time_zone".to_string(), &self.time_zone) {
            return Some(bad);
        }
        // An empty schema made every model's relation unqualified (`m`),
        // which no warehouse has dbt build.
        for (key, value) in [
            ("target.schema", Some(&self.target.schema)),
            ("target.database", self.target.database.as_ref()),
            ("target.name", Some(&self.target.name)),
        ] {
            if value.is_some_and(|v| v.trim().is_empty()) {
                return Some(BadValue::new(
                    key.to_string(),
                    "an empty name is none; write the name (dbt's profile has it), or leave the key out for the default".to_string(),
                ));
            }
        }
        // A misspelt placeholder (`{tabel}`) would be kept as text: every
        // dataset's shadow the same name, or a name nobody meant.
        if let Some(pattern) = &self.backfill.shadow {
            let unknown = pattern
                .split('{')
                .skip(1)
                .filter_map(|p| p.split_once('}').map(|(name, _)| name))
                .find(|name| !["schema", "table", "database"].contains(name));
            if let Some(name) = unknown {
                let hint = did_you_mean(name, ["schema", "table", "database"])
                    .map(crate::text::mean_hint)
                    .unwrap_or_default();
                return Some(BadValue::new(
                    "backfill.shadow".to_string(),
                    format!(
                        "`{{{name}}}` is not a placeholder ripple fills (it fills {{schema}}, {{table}} and {{database}}){hint}"
                    ),
                ));
            }
        }
        for (name, d) in &self.datasets {
            let key = format!("datasets.{name}");
            if let Some(bad) = zone(format!("{key}.time_zone"), &d.time_zone) {
                return Some(BadValue {
                    dataset: Some(name.clone()),
                    ..bad
                });
            }
            if let Some(cost) = d.cost
                && !(cost.is_finite() && cost > 0.0)
            {
                return Some(BadValue::of_dataset(
                    name,
                    "cost",
                    format!("{cost} is not a number of minutes; write a positive number"),
                ));
            }
            if let Some(cost) = d.cost
                && cost > MAX_COST_MINUTES
            {
                return Some(BadValue::of_dataset(
                    name,
                    "cost",
                    format!(
                        "{} minutes a partition is more than a year; write the minutes one partition takes (at most {MAX_COST_MINUTES})",
                        short_number(cost)
                    ),
                ));
            }
            // An empty name filtered on `""`, which no engine takes: the
            // plan failed in its setup, nothing said why at plan time.
            if d.partition_column
                .as_deref()
                .is_some_and(|c| c.trim().is_empty())
            {
                return Some(BadValue::of_dataset(
                    name,
                    "partition_column",
                    "an empty name is no column; write the column partitions are selected by, or leave the key out".to_string(),
                ));
            }
            if d.max_concurrency == Some(0) {
                return Some(BadValue::of_dataset(
                    name,
                    "max_concurrency",
                    "0 would never run a task; write 1 or more".to_string(),
                ));
            }
            if let Some(start) = &d.start
                && let Err(why) = crate::time::TimeKey::parse(start)
            {
                return Some(BadValue::of_dataset(name, "start", why));
            }
            for (up, m) in &d.upstream {
                if let TimeMapping::Window(lo, hi) = m
                    && (lo.unsigned_abs() > MAX_WINDOW || hi.unsigned_abs() > MAX_WINDOW)
                {
                    return Some(BadValue {
                        upstream: Some(up.clone()),
                        ..BadValue::of_dataset(
                            name,
                            &format!("upstream.{up}"),
                            format!(
                                "window [{lo}, {hi}] reaches past {MAX_WINDOW} partitions; write the window the SQL reads, or `all`"
                            ),
                        )
                    });
                }
            }
            if let Some(bad) = tolerance(key, &d.checks) {
                return Some(BadValue {
                    dataset: Some(name.clone()),
                    ..bad
                });
            }
        }
        for (grain, n) in &self.backfill.batch {
            if *n == 0 {
                return Some(BadValue::new(
                    format!("backfill.batch.{grain}"),
                    "0 partitions per batch would never finish; write 1 or more".to_string(),
                ));
            }
        }
        if self.backfill.max_concurrency == Some(0) {
            return Some(BadValue::new(
                "backfill.max_concurrency".to_string(),
                "0 would never run a task; write 1 or more".to_string(),
            ));
        }
        if let Some(w) = self
            .backfill
            .windows
            .iter()
            .find(|w| crate::time::parse_window(w).is_none())
        {
            return Some(BadValue::new(
                "backfill.windows".to_string(),
                format!("`{w}` is not a window; write it as HH:MM-HH:MM (UTC), e.g. 20:00-06:00"),
            ));
        }
        for (i, p) in self.backfill.production.iter().enumerate() {
            if let Err(why) = crate::time::parse_cron(&p.cron) {
                return Some(
                    BadValue::new(
                        "backfill.production.cron".to_string(),
                        format!(
                            "DAG `{}`: {why}; write five fields, e.g. '0 2 * * *', or @daily",
                            p.dag
                        ),
                    )
                    .entry(i),
                );
            }
            if !p.duration.is_empty() && crate::time::parse_duration(&p.duration).is_none() {
                return Some(
                    BadValue::new(
                        "backfill.production.duration".to_string(),
                        format!(
                            "DAG `{}`: `{}` is not a duration; write e.g. 90m, 2h or 1h30m",
                            p.dag, p.duration
                        ),
                    )
                    .entry(i),
                );
            }
        }
        tolerance("backfill".to_string(), &self.backfill.checks)
    }
}

/// A setting that parses but makes no sense.
struct BadValue {
    /// Its key path (`backfill.production.cron`).
    key: String,
    message: String,
    /// Which occurrence of the key's last part holds it, for list entries
    /// (the third `cron:` under `production:`).
    entry: usize,
    /// The `datasets:` key it is under, whose name may hold dots.
    dataset: Option<String>,
    /// Its upstream key, when it is an `upstream:` mapping.
    upstream: Option<String>,
}

impl BadValue {
    fn new(key: String, message: String) -> BadValue {
        BadValue {
            key,
            message,
            entry: 0,
            dataset: None,
            upstream: None,
        }
    }

    /// A bad `field` of the dataset `name` (`datasets.<name>.<field>`).
    fn of_dataset(name: &str, field: &str, message: String) -> BadValue {
        BadValue {
            dataset: Some(name.to_string()),
            ..BadValue::new(format!("datasets.{name}.{field}"), message)
        }
    }

    fn entry(mut self, index: usize) -> BadValue {
        self.entry = index;
        self
    }

    /// (line, column) of the key's last part in `text`, 1-based; the line
    /// of the nearest part found, column 0, when the key is not found.
    fn place(&self, text: &str, places: &KeyPlaces) -> (u32, u32) {
        if let (Some(d), Some(up)) = (&self.dataset, &self.upstream) {
            return places.line_column(d, Some(up));
        }
        // Where to look from, and the key's parts from there on.
        let (from, rest): (usize, Vec<&str>) = match &self.dataset {
            Some(d) => {
                let (line, _) = places.line_column(d, None);
                let field = &self.key[self.key.len().min(format!("datasets.{d}.").len())..];
                (line.saturating_sub(1) as usize, field.split('.').collect())
            }
            None => (0, self.key.split('.').collect()),
        };
        let mut found = (from as u32, 0);
        let mut want = 0;
        let mut skip = self.entry;
        'lines: for (n, l) in text.lines().enumerate().skip(from) {
            // Several parts can share a line (`a: { checks: { row_count: 2 } }`).
            let mut pos = 0;
            loop {
                let Some(part) = rest.get(want) else {
                    break 'lines;
                };
                let tail = &l[pos..];
                let Some(col) = tail
                    .find(&format!("{part}:"))
                    .or_else(|| tail.find(&format!("{part} :")))
                else {
                    break;
                };
                found = (n as u32 + 1, l[..pos + col].chars().count() as u32 + 1);
                pos += col + part.len();
                if want + 1 == rest.len() && skip > 0 {
                    skip -= 1;
                    continue;
                }
                want += 1;
            }
        }
        if want < rest.len() {
            found.1 = 0;
        }
        found
    }
}

/// The widest window a `ripple.yml` mapping may give, in partitions.
const MAX_WINDOW: u64 = 100_000;

/// The most minutes one partition may cost (a year): more is a typo or a
/// unit mistake, and costs times partitions must stay countable.
pub const MAX_COST_MINUTES: f64 = 525_600.0;

/// Where a YAML (or JSON) error is and why, the reason without the place
/// serde-saphyr writes before it: its Display draws a snippet, and the
/// first line holds `error: line L column C: <reason>`.
/// Expanded YAML events (aliases replayed) one file may produce, at most.
/// Real dbt property files reuse a few anchors hundreds of times, so the
/// limit is on what the aliases expand to, never on how many there are: an
/// alias bomb (each level ten aliases of the one below) passes a million
/// events by its sixth level and stops there.
pub(crate) const YAML_MAX_EXPANDED_EVENTS: usize = 1_000_000;
/// Nesting of YAML collections and of aliases inside aliases, at most.
pub(crate) const YAML_MAX_DEPTH: usize = 64;

/// The parser options every YAML file ripple reads is parsed with: the
/// expanded size, nodes and depth are capped; the alias-to-anchor ratio,
/// which rejected real files, is not.
pub(crate) fn yaml_options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.enforce_alias_anchor_ratio = false;
    budget.max_depth = YAML_MAX_DEPTH;
    // Files themselves can be large (thousands of sources); what they expand
    // to is capped below.
    budget.max_events = 4 * YAML_MAX_EXPANDED_EVENTS;
    budget.max_nodes = 2 * YAML_MAX_EXPANDED_EVENTS;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options.alias_limits.max_total_replayed_events = YAML_MAX_EXPANDED_EVENTS;
    options.alias_limits.max_replay_stack_depth = YAML_MAX_DEPTH;
    options
}

/// Parses YAML text with [`yaml_options`].
pub(crate) fn yaml_from_str<T: serde::de::DeserializeOwned>(
    text: &str,
) -> std::result::Result<T, serde_saphyr::Error> {
    serde_saphyr::from_str_with_options(text, yaml_options())
}

/// Whether a YAML error is one of [`yaml_options`]' size limits (what the
/// aliases expand to, nesting), not a mistake in the text.
pub(crate) fn is_yaml_size_limit(err: &serde_saphyr::Error) -> bool {
    use serde_saphyr::Error as E;
    let mut err = err;
    while let E::AliasError { error, .. } | E::WithSnippet { error, .. } = err {
        err = error;
    }
    match err {
        E::Budget { .. }
        | E::AliasReplayLimitExceeded { .. }
        | E::AliasReplayStackDepthExceeded { .. }
        | E::AliasReplayCounterOverflow { .. } => true,
        // The parser's own nesting limit (set from the budget's depth).
        E::ExternalMessage { source, .. } => matches!(
            &**source,
            serde_saphyr::ExternalMessageSource::Parser(scan)
                if matches!(scan.kind(), serde_saphyr::granit_parser::ErrorKind::RecursionLimitExceeded)
        ),
        _ => false,
    }
}

/// `Some(key)` when the error is a key written twice in one mapping (the
/// key when it is text).
pub(crate) fn duplicate_key(err: &serde_saphyr::Error) -> Option<Option<String>> {
    use serde_saphyr::Error as E;
    let mut err = err;
    while let E::AliasError { error, .. } | E::WithSnippet { error, .. } = err {
        err = error;
    }
    match err {
        E::DuplicateMappingKey { key, .. } => Some(key.clone()),
        _ => None,
    }
}

/// (line, column, reason) of a YAML error; a size limit says what it
/// protects against and what to do.
pub(crate) fn yaml_error(err: &serde_saphyr::Error) -> (u32, u32, String) {
    let (line, column) = err
        .location()
        .map_or((0, 0), |l| (l.line() as u32, l.column() as u32));
    let full = err.to_string();
    let first = full.lines().next().unwrap_or_default();
    let reason = first
        .split_once(": ")
        .filter(|(head, _)| head.starts_with("error"))
        .map_or(first, |(_, rest)| rest);
    let mut reason = reason
        .split_once(": ")
        .filter(|(head, _)| head.starts_with("line "))
        .map_or(reason, |(_, rest)| rest)
        .to_string();
    // The library's own advice names its options, which a user cannot set.
    if let Some(key) = duplicate_key(err) {
        reason = match key {
            Some(k) => format!("the key `{k}` is written twice in one mapping"),
            None => "a key is written twice in one mapping".to_string(),
        };
    }
    reason = plain_reason(&reason).unwrap_or(reason);
    if is_yaml_size_limit(err) {
        // The library's wording is its internals (`budget breached: Depth
        // { depth: 65 }`, `total_replayed_events=...`).
        reason = if ["Depth", "depth", "recursion"]
            .iter()
            .any(|w| reason.contains(w))
        {
            format!(
                "the file nests deeper than ripple's limit of {YAML_MAX_DEPTH} levels; flatten it"
            )
        } else if ["Events", "Nodes"].iter().any(|w| reason.contains(w)) {
            // Size, of the text or of what its aliases expand to: which
            // one the library does not say.
            format!(
                "the file holds, or its aliases expand to, more than ripple reads from one YAML file ({} values); split it, or use fewer nested aliases",
                2 * YAML_MAX_EXPANDED_EVENTS
            )
        } else {
            format!(
                "the file expands (through its aliases) past ripple's limit of {YAML_MAX_EXPANDED_EVENTS} YAML events, which protects against alias bombs; split it or use fewer nested aliases"
            )
        };
    }
    (line, column, reason)
}

/// The deserializer's wording (`expected sequence start`, `invalid u32`,
/// `unknown variant`) as a user reads it: what to write instead.
fn plain_reason(reason: &str) -> Option<String> {
    if let Some(rest) = reason.strip_prefix("unknown variant `") {
        let (value, rest) = rest.split_once('`')?;
        let expected: Vec<String> = rest
            .split_once("expected ")
            .map(|(_, list)| list)
            .unwrap_or_default()
            .trim_start_matches("one of ")
            .split(", ")
            .map(|s| s.trim_matches(|c| c == '`' || c == ' ').to_string())
            .filter(|s| !s.is_empty())
            .collect();
        let hint = did_you_mean(value, expected.iter().map(String::as_str))
            .map(crate::text::mean_hint)
            .unwrap_or_default();
        return Some(format!(
            "`{value}` is not one of {}{hint}",
            expected.join(", ")
        ));
    }
    if reason.contains("non-finite float") {
        return Some(
            "expected a number (`.nan` and `.inf` are not numbers one can compute with)"
                .to_string(),
        );
    }
    if reason.trim_start().starts_with("tabs disallowed") {
        return Some(
            "a tab indents this line, and YAML indents with spaces only: replace the tab with spaces"
                .to_string(),
        );
    }
    let plain = match reason.trim() {
        "expected sequence start" => "expected a list: `[a, b]`, or one `- a` line per item",
        "expected mapping start" => "expected a mapping: `key: value` lines, or `{key: value}`",
        "invalid u32" => "expected a whole number from 0 to 4294967295 (no sign, no decimals)",
        "invalid u64" | "invalid usize" => {
            "expected a whole number from 0 to 18446744073709551615 (no sign, no decimals)"
        }
        "invalid i32" => "expected a whole number from -2147483648 to 2147483647 (no decimals)",
        "invalid i64" => {
            "expected a whole number from -9223372036854775808 to 9223372036854775807 (no decimals)"
        }
        "invalid f64" | "invalid f32" => "expected a number",
        "invalid bool" => "expected true or false",
        "expected string scalar" | "expected scalar" => {
            "expected one value (`key: value`), not a list or a mapping"
        }
        _ => return None,
    };
    Some(plain.to_string())
}

/// A number as a message shows it: `1e300`, not its 301 digits.
fn short_number(x: f64) -> String {
    let plain = x.to_string();
    if plain.len() > 20 {
        format!("{x:e}")
    } else {
        plain
    }
}

/// A readable error: `ripple.yml:4:5: datasets.orders_7d: unknown key
/// `grian`; did you mean `grain`?`.
fn config_error(path: &Path, key_path: &str, err: &serde_saphyr::Error) -> Error {
    let (line, column, reason) = yaml_error(err);
    let message = match unknown_field(&reason) {
        Some((field, expected)) => {
            let parent = key_path
                .strip_suffix(field.as_str())
                .unwrap_or(key_path)
                .trim_end_matches('.');
            let place = if parent.is_empty() || parent == "." {
                String::new()
            } else {
                format!("{parent}: ")
            };
            let hint = did_you_mean(&field, expected.iter().map(String::as_str))
                .map(crate::text::mean_hint)
                .unwrap_or_else(|| format!("; valid keys: {}", expected.join(", ")));
            format!("{place}unknown key `{field}`{hint}")
        }
        None if !key_path.is_empty() && key_path != "." => format!("{key_path}: {reason}"),
        None => reason,
    };
    Error::Config {
        path: path.to_path_buf(),
        line,
        column,
        message,
    }
}

/// A syntax error at or after a line a tab indents, as that tab: the
/// scanner's own wording (`did not find expected <document start>`) names
/// the line after it and not the cause.
fn tab_indent_before(text: &str, path: &Path, error: &Error) -> Option<Error> {
    let Error::Config { line, message, .. } = error else {
        return None;
    };
    if !message.starts_with("did not find expected") && !message.starts_with("mapping values") {
        return None;
    }
    let (index, _) = text
        .lines()
        .enumerate()
        .take(*line as usize)
        .find(|(_, l)| l.starts_with('\t') || l.trim_start_matches(' ').starts_with('\t'))?;
    Some(Error::Config {
        path: path.to_path_buf(),
        line: index as u32 + 1,
        column: 1,
        message: "a tab indents this line, and YAML indents with spaces only: replace the tab with spaces"
            .to_string(),
    })
}

/// `unknown field `x`, expected one of a, b` → ("x", [a, b]).
fn unknown_field(reason: &str) -> Option<(String, Vec<String>)> {
    let rest = reason.strip_prefix("unknown field `")?;
    let (field, rest) = rest.split_once('`')?;
    let expected = rest
        .split_once("expected ")
        .map(|(_, list)| list)
        .unwrap_or_default()
        .trim_start_matches("one of ")
        .split(", ")
        .map(|s| s.trim_matches(|c| c == '`' || c == ' ').to_string())
        .filter(|s| !s.is_empty())
        .collect();
    Some((field.to_string(), expected))
}

fn dialect<'de, D: serde::Deserializer<'de>>(de: D) -> std::result::Result<SqlDialect, D::Error> {
    let name = String::deserialize(de)?;
    name.parse()
        .map_err(|e: Error| serde::de::Error::custom(e.to_string()))
}

/// An edge mapping as written: `none`, `all`, `identity` or `{window: [lo, hi]}`.
#[derive(Deserialize)]
#[serde(untagged)]
enum MappingSpec {
    Word(String),
    Window(WindowSpec),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WindowSpec {
    window: [i64; 2],
}

fn mappings<'de, D: serde::Deserializer<'de>>(
    de: D,
) -> std::result::Result<BTreeMap<String, TimeMapping>, D::Error> {
    use serde::de::Error as _;
    let specs = BTreeMap::<String, MappingSpec>::deserialize(de)?;
    specs
        .into_iter()
        .map(|(name, spec)| {
            let mapping = match spec {
                MappingSpec::Word(w) => match w.as_str() {
                    "none" => TimeMapping::None,
                    "all" => TimeMapping::All,
                    "identity" => TimeMapping::Identity,
                    other => {
                        return Err(D::Error::custom(format!(
                            "upstream `{name}`: unknown mapping `{other}`; use identity, all, none or {{ window: [lo, hi] }}"
                        )));
                    }
                },
                MappingSpec::Window(WindowSpec { window: [lo, hi] }) if lo > hi => {
                    return Err(D::Error::custom(format!(
                        "upstream `{name}`: window [{lo}, {hi}] has lo > hi; write it as [{hi}, {lo}]"
                    )));
                }
                MappingSpec::Window(WindowSpec { window: [lo, hi] }) => TimeMapping::Window(lo, hi),
            };
            Ok((name, mapping))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn values_that_parse_but_make_no_sense_are_refused_with_their_place() {
        let err = |yml: &str| {
            Config::parse(yml, Path::new("ripple.yml"))
                .unwrap_err()
                .to_string()
        };
        let e = err("datasets:\n  a: { cost: 1e300 }\n");
        assert!(
            e.contains("datasets.a.cost") && e.contains("more than a year"),
            "{e}"
        );
        // Shown as written short, not as its 301 digits.
        assert!(e.contains("1e300 minutes") && e.len() < 300, "{e}");
        assert!(err("datasets:\n  a: { cost: 525601 }\n").contains("datasets.a.cost"));
        let e = err("datasets:\n  orders:\n    grain: day\n    cost: .inf\n");
        assert!(
            e.starts_with("ripple.yml:4:5: datasets.orders.cost: inf is not a number of minutes"),
            "{e}"
        );
        assert!(
            err("backfill:\n  batch: { day: 0 }\n").contains("backfill.batch.day: 0 partitions")
        );
        assert!(
            err("backfill:\n  max_concurrency: 0\n")
                .contains("backfill.max_concurrency: 0 would never")
        );
        assert!(
            err("datasets:\n  a: { max_concurrency: 0 }\n").contains("datasets.a.max_concurrency")
        );
        assert!(
            err("datasets:\n  a: { upstream: { b: { window: [-9223372036854775807, 0] } } }\n")
                .contains("reaches past 100000 partitions")
        );
        // A tolerance of 1 or more lets every row go: a check that cannot fail.
        for t in ["-1", "1", "5"] {
            let e = err(&format!("backfill:\n  checks: {{ row_count: {t} }}\n"));
            assert!(
                e.contains("backfill.checks.row_count") && e.contains("below 1"),
                "{e}"
            );
        }
        assert!(err("datasets:\n  a: { cost: -5 }\n").contains("datasets.a.cost"));
        // An empty target schema made every relation unqualified.
        let e = err("target:\n  schema: ''\n");
        assert!(
            e.starts_with("ripple.yml:2:3: target.schema: an empty name"),
            "{e}"
        );
        assert!(
            err("datasets:\n  a: { partition_column: '' }\n")
                .contains("datasets.a.partition_column")
        );
        // Every place is a line and a column, dotted dataset names too.
        assert!(
            err("datasets:\n  raw.orders: { grain: day, start: 2024-13-01 }\n").starts_with(
                "ripple.yml:2:29: datasets.raw.orders.start: `2024-13-01` is not a date"
            ),
        );
        assert!(
            err("backfill:\n  max_concurrency: 2\n  windows: [\"25:00-06:00\"]\n")
                .starts_with("ripple.yml:3:3: backfill.windows:")
        );
        let e = err(
            "backfill:\n  production:\n    - { dag: a, cron: '0 2 * * *' }\n    - { dag: b, cron: '0 2 * *' }\n",
        );
        assert!(
            e.starts_with("ripple.yml:4:17: backfill.production.cron: DAG `b`"),
            "{e}"
        );
        assert!(
            err("datasets:\n  a.b: { checks: { row_count: 2 } }\n")
                .starts_with("ripple.yml:2:20: datasets.a.b.checks.row_count")
        );
        assert!(
            Config::parse(
                "datasets:\n  a: { cost: 2.5, max_concurrency: 2 }\n",
                Path::new("r")
            )
            .is_ok()
        );
    }

    use super::*;

    fn parse(text: &str) -> Result<Config> {
        Config::parse(text, Path::new("ripple.yml"))
    }

    const DESIGN_EXAMPLE: &str = r#"
dialect: postgres
models: [models]
dags: [dags]
datasets:
  orders_7d:
    grain: day
    upstream: { stg_orders: { window: [-6, 0] } }
  dim_customers: { grain: none }
  customer_segments:
    grain: day
    start: 2025-01-01
    validate: "select count(*) = 0 from {table} where segment is null and {partition_filter}"
  order_audit:
    upstream: { stg_orders: none }
backfill:
  batch: { hour: 24, day: 7, week: 4, month: 1 }
  max_concurrency: 4
  windows: ["20:00-06:00"]
  production:
    - { dag: daily_etl, cron: "0 2 * * *", duration: 90m }
  shadow: "{schema}.{table}__backfill"
"#;

    #[test]
    fn a_production_run_may_leave_out_its_duration() {
        // 60 minutes, as docs/config.md says.
        let c = parse("backfill:\n  production:\n    - { dag: x, cron: \"0 * * * *\" }\n").unwrap();
        assert_eq!(c.backfill.production[0].duration, "");
    }

    #[test]
    fn the_design_example_parses() {
        let c = parse(DESIGN_EXAMPLE).unwrap();
        assert_eq!(c.dialect, SqlDialect::Postgres);
        assert_eq!(c.models, [PathBuf::from("models")]);
        let o = &c.datasets["orders_7d"];
        assert_eq!(o.grain, Some(Grain::Day));
        assert_eq!(o.upstream["stg_orders"], TimeMapping::Window(-6, 0));
        assert_eq!(c.datasets["dim_customers"].grain, Some(Grain::None));
        assert_eq!(
            c.datasets["customer_segments"].start.as_deref(),
            Some("2025-01-01")
        );
        assert_eq!(
            c.datasets["order_audit"].upstream["stg_orders"],
            TimeMapping::None
        );
        assert_eq!(c.backfill.batch[&Grain::Day], 7);
        assert_eq!(c.backfill.max_concurrency, Some(4));
        assert_eq!(c.backfill.production[0].duration, "90m");
        assert_eq!(
            c.backfill.shadow.as_deref(),
            Some("{schema}.{table}__backfill")
        );
    }

    #[test]
    fn empty_file_is_the_defaults() {
        assert_eq!(parse("").unwrap(), Config::default());
        assert_eq!(parse("# nothing\n").unwrap(), Config::default());
    }

    #[test]
    fn unknown_keys_name_the_path_and_a_suggestion() {
        let err = parse("datasets:\n  orders_7d:\n    grian: day\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("ripple.yml:3:5"), "{err}");
        assert!(
            err.contains("datasets.orders_7d: unknown key `grian`"),
            "{err}"
        );
        assert!(err.contains("did you mean `grain`?"), "{err}");
        let err = parse("dialekt: postgres\n").unwrap_err().to_string();
        assert!(
            err.contains("unknown key `dialekt`; did you mean `dialect`?"),
            "{err}"
        );
    }

    #[test]
    fn wrong_types_and_values_are_errors_with_the_path() {
        let err = parse("backfill:\n  max_concurrency: lots\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("backfill.max_concurrency"), "{err}");
        assert!(err.contains(":2:"), "{err}");
        let err = parse("dialect: oracle9\n").unwrap_err().to_string();
        assert!(err.contains("unknown dialect 'oracle9'"), "{err}");
        let err = parse("datasets:\n  a: { grain: fortnight }\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("datasets.a.grain"), "{err}");
    }

    #[test]
    fn the_deserializer_s_wording_is_said_as_what_to_write() {
        let said = |text: &str| parse(text).unwrap_err().to_string();
        let err = said("datasets:\n  a: { grain: dy }\n");
        assert!(
            err.contains("datasets.a.grain: `dy` is not one of hour, day, week, month, year, none; did you mean `day`?"),
            "{err}"
        );
        let err = said("datasets:\n  a:\n\tgrain: day\n");
        assert!(
            err.contains(":3:") && err.contains("replace the tab with spaces"),
            "{err}"
        );
        assert!(!err.contains("disallowed"), "{err}");
        // A tab before the first key: the scanner stops on the next line.
        let err = said("\tdialect: postgres\nmodels: [jobs]\n");
        assert!(err.contains(":1:1: a tab indents this line"), "{err}");
        let err = said("dialect: [postgres]\n");
        assert!(
            err.contains("dialect: expected one value (`key: value`), not a list"),
            "{err}"
        );
        let err = said("models: jobs\n");
        assert!(
            err.contains("ripple.yml:1:9: models: expected a list"),
            "{err}"
        );
        let err = said("datasets:\n  a: { upstream: 3 }\n");
        assert!(
            err.contains("datasets.a.upstream: expected a mapping"),
            "{err}"
        );
        let err = said("backfill: { max_concurrency: -1 }\n");
        assert!(err.contains("expected a whole number from 0 to"), "{err}");
        for err in [err, said("models: jobs\n")] {
            assert!(
                !err.contains("u32") && !err.contains("sequence start"),
                "{err}"
            );
        }
        let err = said("backfill: { shadow: \"{schema}.{table}__{tabel}\" }\n");
        assert!(
            err.contains(
                "ripple.yml:1:13: backfill.shadow: `{tabel}` is not a placeholder ripple fills"
            ),
            "{err}"
        );
        assert!(err.contains("did you mean `table`?"), "{err}");
        assert!(parse("backfill: { shadow: \"{database}.{schema}_bf.{table}\" }\n").is_ok());
    }

    #[test]
    fn the_places_of_dataset_and_upstream_keys_are_kept() {
        let c = parse(
            "dialect: duckdb\ndatasets:\n  a: { grain: day }\n  b:\n    upstream:\n      a: all\n      x.a: { window: [-1, 0] }\n  c: { upstream: { a: none } }\n",
        )
        .unwrap();
        let p = &c.places;
        assert_eq!(p.line_column("a", None), (3, 3));
        assert_eq!(p.line_column("b", None), (4, 3));
        assert_eq!(p.line_column("b", Some("a")), (6, 7));
        assert_eq!(p.line_column("b", Some("x.a")), (7, 7));
        assert_eq!(p.line_column("c", Some("a")), (8, 20));
        assert_eq!(p.line_column("c", Some("zz")), (0, 0));
        assert_eq!(p.at((8, 20)), "ripple.yml:8:20");
        assert_eq!(p.at((0, 0)), "ripple.yml");
        // Where keys are written is no setting.
        assert_eq!(c, parse(&format!("\n\n{}", "dialect: duckdb\ndatasets:\n  a: { grain: day }\n  b:\n    upstream:\n      a: all\n      x.a: { window: [-1, 0] }\n  c: { upstream: { a: none } }\n")).unwrap());
        assert_eq!(
            parse("datasets: {}\n")
                .unwrap()
                .places
                .line_column("a", None),
            (0, 0)
        );
    }

    #[test]
    fn bad_windows_are_rejected() {
        let err = parse("datasets:\n  a:\n    upstream: { b: { window: [0, -6] } }\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("lo > hi"), "{err}");
        let err = parse("datasets:\n  a:\n    upstream: { b: sideways }\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown mapping `sideways`"), "{err}");
    }
}
