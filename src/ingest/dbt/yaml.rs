//! dbt's YAML: `dbt_project.yml`, and the property files beside models
//! (sources, model / seed / snapshot configs, columns, tags, versions).
//! Read leniently: dbt accepts much that ripple does not need, and an
//! unexpected shape is skipped rather than fatal.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use crate::project::Diagnostic;

/// The parts of `dbt_project.yml` ripple uses.
#[derive(Debug, Clone, Default)]
pub(crate) struct ProjectFile {
    pub name: String,
    pub model_paths: Vec<String>,
    pub macro_paths: Vec<String>,
    pub seed_paths: Vec<String>,
    pub snapshot_paths: Vec<String>,
    pub packages_install_path: String,
    pub vars: Map<String, Value>,
    pub models: Value,
    pub seeds: Value,
    pub snapshots: Value,
    /// `sources:`, by (project, folders of the property file, source,
    /// table), as dbt's resource paths for sources run.
    pub sources: Value,
    /// `dispatch:`: macro namespace → search order.
    pub dispatch: BTreeMap<String, Vec<String>>,
    /// The file's text, for the dbt executor's overlay.
    pub text: String,
}

/// Parses YAML text into JSON-like values, or a diagnostic naming where it
/// failed.
/// A key written twice in one mapping is resolved as dbt's loader does
/// (the last value wins), with a `yaml-duplicate-key` warning naming the
/// first such key: dbt accepts the file, so rejecting it would lose every
/// source or var in it.
pub(crate) fn parse(text: &str, file: &str) -> Result<(Value, Option<Diagnostic>), Diagnostic> {
    if text.trim().is_empty() {
        return Ok((Value::Null, None));
    }
    let failed = |e: &serde_saphyr::Error| {
        let (line, column, mut reason) = crate::config::yaml_error(e);
        if !crate::config::is_yaml_size_limit(e) {
            reason.push_str("; fix the YAML");
        }
        Diagnostic::error("yaml-error", Some(file.to_string()), line, column, reason)
    };
    // Where YAML 1.1 and 1.2 may type a scalar differently, the text is
    // read with such scalars kept as strings, then typed as PyYAML would;
    // otherwise once, as it is.
    let pyyaml = may_differ_from_pyyaml(text);
    let mut options = crate::config::yaml_options();
    if pyyaml {
        options.leading_zero_numbers_as_strings = true;
        options.strict_booleans = true;
    }
    let (value, options, warning) = match serde_saphyr::from_str_with_options::<Value>(
        text,
        options.clone(),
    ) {
        Ok(v) => (v, options, None),
        Err(e) if crate::config::duplicate_key(&e).is_some() => {
            let (line, column, _) = crate::config::yaml_error(&e);
            let key = crate::config::duplicate_key(&e).flatten();
            let mut options = options;
            options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::LastWins;
            let value: Value = serde_saphyr::from_str_with_options(text, options.clone())
                .map_err(|e| failed(&e))?;
            let key = key.map(|k| format!(" `{k}`")).unwrap_or_default();
            let warning = Diagnostic::warning(
                "yaml-duplicate-key",
                Some(file.to_string()),
                line,
                column,
                format!(
                    "the key{key} is written twice in one mapping; the last value is used, as dbt does (other keys written twice in this file are resolved the same way); remove the one that is not meant"
                ),
            );
            (value, options, Some(warning))
        }
        Err(e) => return Err(failed(&e)),
    };
    if !pyyaml {
        return Ok((value, warning));
    }
    Ok((pyyaml_scalars(text, value, options), warning))
}

/// `text_values` (parsed from `text` with `options`, the scalars YAML 1.1
/// and 1.2 may type differently kept as strings) with its plain scalars typed
/// as dbt's YAML loader (PyYAML, YAML 1.1) types them, where YAML 1.2 and
/// ripple's parser differ: `09` and `08` are strings and `017` is 15 (an
/// octal), `y`, `n` and `tRUE` are strings while `yes`, `on`, `Off` are
/// booleans. A var `month: 09` once named `sales_2024_9.0`.
fn pyyaml_scalars(text: &str, text_values: Value, options: serde_saphyr::Options) -> Value {
    // The same options (duplicate keys too) with scalars typed as usual.
    let usual = crate::config::yaml_options();
    let mut plain = options;
    plain.leading_zero_numbers_as_strings = usual.leading_zero_numbers_as_strings;
    plain.strict_booleans = usual.strict_booleans;
    let mut as_yaml11 = plain.clone();
    as_yaml11.legacy_octal_numbers = true;
    match serde_saphyr::from_str_with_options::<Value>(text, as_yaml11) {
        Ok(typed) => merge_pyyaml(text_values, typed),
        // Typed as YAML 1.2 types it, as without the scan.
        Err(_) => serde_saphyr::from_str_with_options::<Value>(text, plain).unwrap_or(text_values),
    }
}

/// Each scalar of `text_values` (the plain ones that may differ kept as
/// their text) typed as PyYAML would from `typed`'s reading.
fn merge_pyyaml(text_values: Value, typed: Value) -> Value {
    match (text_values, typed) {
        (Value::Object(a), Value::Object(mut b)) => Value::Object(
            a.into_iter()
                .map(|(k, v)| {
                    let t = b.remove(&k).unwrap_or(Value::Null);
                    (k, merge_pyyaml(v, t))
                })
                .collect(),
        ),
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => Value::Array(
            a.into_iter()
                .zip(b)
                .map(|(x, y)| merge_pyyaml(x, y))
                .collect(),
        ),
        (Value::String(s), Value::Bool(b)) => {
            const YAML11_BOOLS: &[&str] = &[
                "yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF",
                "true", "True", "TRUE", "false", "False", "FALSE",
            ];
            if YAML11_BOOLS.contains(&s.as_str()) {
                Value::Bool(b)
            } else {
                Value::String(s)
            }
        }
        (Value::String(s), Value::Number(n)) => {
            // PyYAML's octal: `0` then digits 0-7 (and `_`).
            let digits = s.trim_start_matches(['-', '+']);
            let octal = digits.len() > 1
                && digits.starts_with('0')
                && digits[1..].chars().all(|c| matches!(c, '0'..='7' | '_'));
            if octal {
                Value::Number(n)
            } else {
                Value::String(s)
            }
        }
        (a, _) => a,
    }
}

/// Whether a word of `text` standing alone as a value (after `: `, `- `,
/// `[` or `,`, before the line's end, `,`, `]`, `}` or a comment) may be a
/// plain scalar PyYAML types otherwise than ripple's parser: a number with
/// a leading zero, or a boolean spelling outside YAML 1.2's. Words in
/// prose (`depends on x`) do not count.
fn may_differ_from_pyyaml(text: &str) -> bool {
    let word_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '+' | '-');
    let mut words = Vec::new();
    let mut start = None;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        match (word_char(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                words.push((s, &text[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    for (start, w) in words {
        let digits = w.trim_start_matches(['-', '+']);
        let b = digits.as_bytes();
        let differs = (b.len() > 1 && b[0] == b'0' && (b[1].is_ascii_digit() || b[1] == b'_'))
            || (w.len() <= 5
                && matches!(
                    w.to_ascii_lowercase().as_str(),
                    "y" | "n" | "yes" | "no" | "on" | "off" | "true" | "false"
                )
                && !matches!(w, "true" | "True" | "TRUE" | "false" | "False" | "FALSE"));
        if !differs {
            continue;
        }
        let before = text[..start].trim_end_matches([' ', '\t']).chars().last();
        let after = text[start + w.len()..]
            .trim_start_matches([' ', '\t'])
            .chars()
            .next();
        if matches!(before, None | Some(':' | '-' | '[' | ',' | '\n'))
            && matches!(after, None | Some('\n' | '\r' | ',' | ']' | '}' | '#'))
        {
            return true;
        }
    }
    false
}

impl ProjectFile {
    /// Reads the project file's fields from its parsed YAML.
    pub fn from_value(v: &Value) -> ProjectFile {
        let paths = |keys: &[&str], default: &str| -> Vec<String> {
            keys.iter()
                .find_map(|k| v.get(*k))
                .map(strings)
                .filter(|p| !p.is_empty())
                .unwrap_or_else(|| vec![default.to_string()])
        };
        ProjectFile {
            text: String::new(),
            name: v
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            model_paths: paths(&["model-paths", "source-paths"], "models"),
            macro_paths: paths(&["macro-paths"], "macros"),
            seed_paths: paths(&["seed-paths", "data-paths"], "seeds"),
            snapshot_paths: paths(&["snapshot-paths"], "snapshots"),
            packages_install_path: v
                .get("packages-install-path")
                .and_then(Value::as_str)
                .unwrap_or("dbt_packages")
                .to_string(),
            vars: v
                .get("vars")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            models: v.get("models").cloned().unwrap_or(Value::Null),
            seeds: v.get("seeds").cloned().unwrap_or(Value::Null),
            snapshots: v.get("snapshots").cloned().unwrap_or(Value::Null),
            sources: v.get("sources").cloned().unwrap_or(Value::Null),
            dispatch: v
                .get("dispatch")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|d| {
                    let ns = d.get("macro_namespace")?.as_str()?.to_string();
                    Some((ns, strings(d.get("search_order")?)))
                })
                .collect(),
        }
    }
}

/// A string or a list of strings, as a list.
pub(crate) fn strings(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items
            .iter()
            .filter_map(|i| match i {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Configuration keys whose values are maps, so they are not taken for
/// sub-folders in `dbt_project.yml` blocks.
const MAP_CONFIGS: &[&str] = &[
    "partition_by",
    "meta",
    "persist_docs",
    "grants",
    "docs",
    "labels",
    "contract",
    "quoting",
    "snapshot_meta_column_names",
    "column_types",
    "hours_to_expiration",
];

/// The configuration a `dbt_project.yml` block (`models:`, `seeds:`) gives
/// the node at `path` (package, folders..., name): each level's settings
/// override the level above, tags accumulate.
pub(crate) fn block_config(block: &Value, path: &[&str]) -> Map<String, Value> {
    let mut out = Map::new();
    let mut level = block;
    for segment in path {
        let Some(next) = level.get(*segment).filter(|v| v.is_object()) else {
            break;
        };
        level = next;
        if let Some(map) = level.as_object() {
            for (key, value) in map {
                let (key, plus) = match key.strip_prefix('+') {
                    Some(k) => (k, true),
                    None => (key.as_str(), false),
                };
                if plus || !value.is_object() || MAP_CONFIGS.contains(&key) {
                    merge_config(&mut out, key, value.clone());
                }
            }
        }
    }
    out
}

/// Sets `key` in `config`; `tags` accumulate, as dbt does.
pub(crate) fn merge_config(config: &mut Map<String, Value>, key: &str, value: Value) {
    if key == "tags" {
        let mut tags: Vec<String> = config.get("tags").map(strings).unwrap_or_default();
        for t in strings(&value) {
            if !tags.contains(&t) {
                tags.push(t);
            }
        }
        config.insert("tags".to_string(), Value::from(tags));
    } else {
        config.insert(key.to_string(), value);
    }
}

/// A source table declared in YAML.
#[derive(Debug, Clone)]
pub(crate) struct SourceDecl {
    pub source: String,
    pub table: String,
    pub database: Option<String>,
    pub schema: String,
    pub identifier: String,
    pub tags: Vec<String>,
    pub columns: Vec<String>,
    pub file: String,
    pub line: u32,
    /// `config: {enabled: ...}` of the table, else of its source, as
    /// written (it may be Jinja: Fivetran's packages turn tables off by a
    /// var).
    pub enabled: Option<Value>,
}

/// Properties of a model, seed or snapshot declared in YAML.
#[derive(Debug, Clone, Default)]
pub(crate) struct NodeProps {
    pub config: Map<String, Value>,
    pub columns: Vec<String>,
    /// Whether it declares data tests (on itself or a column).
    pub tests: bool,
    pub versions: Vec<VersionDecl>,
    pub latest_version: Option<String>,
    /// For YAML-defined snapshots (dbt 1.9+): `relation: ref('x')`.
    pub relation: Option<String>,
    pub file: String,
    pub line: u32,
}

impl NodeProps {
    /// The latest version: `latest_version`, else the highest declared
    /// (dbt's rule).
    pub fn latest(&self) -> Option<String> {
        self.latest_version.clone().or_else(|| {
            self.versions
                .iter()
                .map(|d| d.v.clone())
                .max_by_key(|v| (v.len(), v.clone()))
        })
    }
}

/// One version of a versioned model.
#[derive(Debug, Clone)]
pub(crate) struct VersionDecl {
    pub v: String,
    pub defined_in: Option<String>,
    pub config: Map<String, Value>,
}

/// Everything the property files of one package declare.
#[derive(Debug, Clone, Default)]
pub(crate) struct Properties {
    pub sources: Vec<SourceDecl>,
    pub models: BTreeMap<String, NodeProps>,
    pub seeds: BTreeMap<String, NodeProps>,
    pub snapshots: BTreeMap<String, NodeProps>,
}

impl Properties {
    /// Adds what one property file declares.
    pub fn add(&mut self, doc: &Value, text: &str, file: &str) {
        let lines = name_lines(text);
        let line_of_name = |_: &str, name: &str| lines.get(name).copied().unwrap_or(1);
        for source in doc
            .get("sources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(name) = source.get("name").and_then(Value::as_str) else {
                continue;
            };
            let schema = source.get("schema").and_then(Value::as_str).unwrap_or(name);
            let database = source
                .get("database")
                .or_else(|| source.get("catalog"))
                .and_then(Value::as_str)
                .map(str::to_string);
            let source_tags = source.get("tags").map(strings).unwrap_or_default();
            for table in source
                .get("tables")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(tname) = table.get("name").and_then(Value::as_str) else {
                    continue;
                };
                let mut tags = source_tags.clone();
                for t in table.get("tags").map(strings).unwrap_or_default() {
                    if !tags.contains(&t) {
                        tags.push(t);
                    }
                }
                self.sources.push(SourceDecl {
                    source: name.to_string(),
                    table: tname.to_string(),
                    database: database.clone(),
                    schema: schema.to_string(),
                    identifier: table
                        .get("identifier")
                        .and_then(Value::as_str)
                        .unwrap_or(tname)
                        .to_string(),
                    tags,
                    columns: columns(table),
                    file: file.to_string(),
                    line: line_of_name(text, tname),
                    enabled: [table, source]
                        .iter()
                        .find_map(|n| n.get("config").and_then(|c| c.get("enabled")))
                        .cloned(),
                });
            }
        }
        for (key, map) in [
            ("models", &mut self.models),
            ("seeds", &mut self.seeds),
            ("snapshots", &mut self.snapshots),
        ] {
            for node in doc.get(key).and_then(Value::as_array).into_iter().flatten() {
                let Some(name) = node.get("name").and_then(Value::as_str) else {
                    continue;
                };
                let mut config = node
                    .get("config")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                if let Some(tags) = node.get("tags") {
                    merge_config(&mut config, "tags", tags.clone());
                }
                // What an enforced contract builds the table with: the
                // columns' types and constraints (compared by `diff`).
                let contract = contract_columns(node);
                if !contract.is_empty() {
                    config.insert(CONTRACT_COLUMNS.to_string(), Value::Object(contract));
                }
                let versions = node
                    .get("versions")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|v| {
                        let ver = v.get("v")?;
                        Some(VersionDecl {
                            v: scalar(ver),
                            defined_in: v
                                .get("defined_in")
                                .and_then(Value::as_str)
                                .map(str::to_string),
                            config: v
                                .get("config")
                                .and_then(Value::as_object)
                                .cloned()
                                .unwrap_or_default(),
                        })
                    })
                    .collect();
                map.insert(
                    name.to_string(),
                    NodeProps {
                        config,
                        columns: columns(node),
                        tests: has_tests(node),
                        versions,
                        latest_version: node.get("latest_version").map(scalar),
                        relation: node
                            .get("relation")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                        file: file.to_string(),
                        line: line_of_name(text, name),
                    },
                );
            }
        }
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Whether a node declares data tests (`tests:` / `data_tests:`), on itself
/// or on one of its columns.
fn has_tests(node: &Value) -> bool {
    let declares = |v: &Value| {
        ["tests", "data_tests"].iter().any(|k| {
            v.get(k)
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty())
        })
    };
    declares(node)
        || node
            .get("columns")
            .and_then(Value::as_array)
            .is_some_and(|cols| cols.iter().any(declares))
}

/// The config key holding a node's columns' declared types and
/// constraints ([`contract_columns`]).
pub(crate) const CONTRACT_COLUMNS: &str = "contract_columns";

/// Each column declaring a `data_type` or `constraints`, with them: what a
/// model with an enforced contract is built with (`numeric(18,4)` →
/// `numeric(18,0)` rounds every row).
fn contract_columns(node: &Value) -> serde_json::Map<String, Value> {
    let mut out = serde_json::Map::new();
    for c in node
        .get("columns")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(name) = c.get("name").and_then(Value::as_str) else {
            continue;
        };
        let mut facts = serde_json::Map::new();
        for key in ["data_type", "constraints"] {
            if let Some(v) = c.get(key) {
                facts.insert(key.to_string(), v.clone());
            }
        }
        if !facts.is_empty() {
            out.insert(name.to_string(), Value::Object(facts));
        }
    }
    out
}

fn columns(node: &Value) -> Vec<String> {
    node.get("columns")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("name").and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// The line of the first `name: <name>` of every name in `text`, in one
/// pass (property files can declare thousands of models).
fn name_lines(text: &str) -> std::collections::HashMap<&str, u32> {
    let mut out = std::collections::HashMap::new();
    for (i, l) in text.lines().enumerate() {
        let l = l.trim_start().trim_start_matches("- ").trim_start();
        if let Some(rest) = l.strip_prefix("name:") {
            out.entry(rest.trim().trim_matches(['"', '\'']))
                .or_insert(i as u32 + 1);
        }
    }
    out
}

/// Parses `dbt_project.yml` at `dir`.
pub(crate) fn read_project_file(
    dir: &Path,
    root: &Path,
    rec: Option<&crate::cache::inputs::Recorder>,
) -> Result<(ProjectFile, Option<Diagnostic>), Diagnostic> {
    let path = dir.join("dbt_project.yml");
    let file = super::super::files::relative(root, &path);
    super::note_settings(rec, root, &path);
    crate::input::settings_inside(root, &path).map_err(|e| {
        let message = match e {
            crate::Error::LinkOutside { message, .. } => message,
            other => other.to_string(),
        };
        Diagnostic::error("path-outside-project", Some(file.clone()), 0, 0, message)
    })?;
    let text = super::read(rec, &path)
        .map_err(|e| Diagnostic::error("read-error", Some(file.clone()), 0, 0, e.reason()))?;
    let (value, warning) = parse(&text, &file)?;
    Ok((
        ProjectFile {
            text,
            ..ProjectFile::from_value(&value)
        },
        warning,
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn plain_scalars_are_typed_as_dbts_yaml_loader_types_them() {
        // PyYAML's (YAML 1.1) readings, as `yaml.safe_load` gives them.
        let (v, _) = super::parse(
            "vars:\n  month: 09\n  eight: 08\n  oct: 017\n  ten: 010\n  zero: 00\n  neg: -017\n  flag: y\n  no_: n\n  odd: tRUE\n  yes_: yes\n  off_: Off\n  quoted: '017'\n  plain: 42\n  t: true\n  list: [09, 017, y, on]\n",
            "dbt_project.yml",
        )
        .unwrap();
        // A key written twice: the last value, typed the same way.
        let (twice, warning) =
            super::parse("vars:\n  m: 09\n  m: 017\n  f: y\n", "dbt_project.yml").unwrap();
        assert_eq!(twice["vars"], serde_json::json!({"m": 15, "f": "y"}));
        assert!(warning.is_some());
        assert!(!super::may_differ_from_pyyaml(
            "models:\n  - name: m\n    description: dépend on x, no y é\n"
        ));
        assert!(super::may_differ_from_pyyaml("é: 09\n"));
        assert_eq!(
            v["vars"],
            serde_json::json!({
                "month": "09", "eight": "08", "oct": 15, "ten": 8, "zero": 0, "neg": -15,
                "flag": "y", "no_": "n", "odd": "tRUE", "yes_": true, "off_": false,
                "quoted": "017", "plain": 42, "t": true, "list": ["09", 15, "y", true]
            })
        );
    }

    use super::*;

    #[test]
    fn a_thousand_aliases_of_a_few_anchors_parse() {
        // The shape of real source files: a few anchors reused for every table.
        let mut text = String::from(
            "defaults:\n  fresh: &fresh {warn_after: {count: 1, period: day}}\n  meta: &meta {owner: data}\nsources:\n  - name: raw\n    tables:\n",
        );
        for i in 0..1000 {
            let alias = if i % 2 == 0 { "*fresh" } else { "*meta" };
            text.push_str(&format!("      - name: t{i}\n        freshness: {alias}\n"));
        }
        let v = parse(&text, "models/sources.yml").unwrap().0;
        let tables = v.pointer("/sources/0/tables").unwrap().as_array().unwrap();
        assert_eq!(tables.len(), 1000);
        assert_eq!(
            tables[998].pointer("/freshness/warn_after/count"),
            Some(&Value::from(1))
        );
        assert_eq!(
            tables[999].pointer("/freshness/owner"),
            Some(&Value::from("data"))
        );
    }

    #[test]
    fn an_alias_bomb_is_refused_with_the_file_named() {
        let mut text = String::from(
            "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
        for w in names.windows(2) {
            let (prev, next) = (w[0], w[1]);
            text.push_str(&format!(
                "{next}: &{next} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"
            ));
        }
        let started = std::time::Instant::now();
        let err = parse(&text, "models/bomb.yml").unwrap_err();
        // Not a speed check: a bomb expanded would run for hours; a loaded
        // machine (CI beside other builds) took over 10 s here.
        assert!(started.elapsed() < std::time::Duration::from_secs(120));
        assert_eq!(err.code, "yaml-error");
        assert_eq!(err.file.as_deref(), Some("models/bomb.yml"));
        assert!(
            err.message.contains("alias bombs") || err.message.contains("aliases expand to"),
            "{}",
            err.message
        );
        assert!(!err.message.contains("total_replayed"), "{}", err.message);
    }

    #[test]
    fn a_syntax_error_is_no_size_limit() {
        let err = parse("a: [1, 2\nb: c\n", "x.yml").unwrap_err();
        assert!(err.message.ends_with("; fix the YAML"), "{}", err.message);
        assert!(!err.message.contains("alias"), "{}", err.message);
    }

    #[test]
    fn deep_nesting_is_refused() {
        let text = format!("{}1{}", "[".repeat(500), "]".repeat(500));
        let err = parse(&text, "x.yml").unwrap_err();
        assert!(err.message.contains("levels"), "{}", err.message);
        assert!(!err.message.contains("Depth {"), "{}", err.message);
    }

    #[test]
    fn project_blocks_cascade_and_tags_accumulate() {
        let block: Value = serde_saphyr::from_str(
            "shop:\n  +materialized: view\n  +tags: [shop]\n  staging:\n    +schema: staging\n    tags: [stg]\n  marts:\n    +materialized: table\n    partition_by: {field: d}\n",
        )
        .unwrap();
        let c = block_config(&block, &["shop", "staging", "stg_orders"]);
        assert_eq!(c["materialized"], "view");
        assert_eq!(c["schema"], "staging");
        assert_eq!(c["tags"], serde_json::json!(["shop", "stg"]));
        let c = block_config(&block, &["shop", "marts", "orders"]);
        assert_eq!(c["materialized"], "table");
        assert_eq!(c["partition_by"]["field"], "d");
    }

    #[test]
    fn sources_and_models_are_read_with_lines() {
        let text = "version: 2\nsources:\n  - name: raw\n    schema: landing\n    tables:\n      - name: orders\n        identifier: orders_v2\n      - name: customers\nmodels:\n  - name: stg_orders\n    config: {materialized: view}\n    columns:\n      - name: id\n    versions:\n      - v: 1\n      - v: 2\n";
        let doc = parse(text, "models/schema.yml").unwrap().0;
        let mut props = Properties::default();
        props.add(&doc, text, "models/schema.yml");
        assert_eq!(props.sources.len(), 2);
        assert_eq!(props.sources[0].schema, "landing");
        assert_eq!(props.sources[0].identifier, "orders_v2");
        assert_eq!(props.sources[0].line, 6);
        let m = &props.models["stg_orders"];
        assert_eq!(m.columns, ["id"]);
        assert_eq!(m.line, 10);
        assert_eq!(
            m.versions.iter().map(|v| v.v.as_str()).collect::<Vec<_>>(),
            ["1", "2"]
        );
    }

    #[test]
    fn bad_yaml_is_located() {
        let d = parse("models:\n  - name: [x\n", "m.yml").unwrap_err();
        assert_eq!(d.file.as_deref(), Some("m.yml"));
        assert!(d.line >= 2, "{d}");
    }
}
