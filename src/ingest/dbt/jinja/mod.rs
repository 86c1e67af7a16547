//! dbt's Jinja, rendered with minijinja: `ref`, `source`, `config`, `var`,
//! `is_incremental`, `this`, `target`, `adapter.dispatch`, project and package
//! macros, and a harmless placeholder for anything unknown.
//!
//! Rendering is sandboxed by construction: no function here reads a file, the
//! environment or the network (`env_var` returns its default), templates run
//! on a fuel budget, and macro calls are capped in depth and count, so no
//! template can hang or exhaust the stack.
//!
//! Four files: this one renders (environments, macro calls, captures);
//! `builtins.rs` is dbt's context (`ref`, `adapter`, cross-database
//! macros...); `scanner.rs` reads Jinja text without rendering it (tags,
//! macro names, called names); `compat.rs` closes the gaps between Jinja2
//! and minijinja that dbt projects meet (Unicode spaces, mutable lists).
//!
//! What rendering tells the graph is captured as it happens: every `ref()`
//! and `source()` call, every `config()` keyword. These are exactly what dbt
//! records as `depends_on` and `config` when it parses a project.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use minijinja::value::{Kwargs, Object, Rest, Serde, ValueOrKwargs};
use minijinja::{Environment, Error, ErrorKind, State, UndefinedBehavior, Value, context};

use crate::project::Target;

mod builtins;
mod compat;
pub(crate) mod filters;
pub(crate) mod guard;
#[cfg(test)]
mod jinja2_cases;
mod pymodules;
mod pyre;
mod scanner;

use builtins::{Namespace, add_builtins, env_var, var};
pub(crate) use pymodules::utc_datetime;
pub(crate) use scanner::*;

pub(crate) use crate::project::UNKNOWN_PLACEHOLDER as PLACEHOLDER;

/// Instructions one template evaluation may run before it is stopped.
const FUEL: u64 = 2_000_000;
/// Nested macro calls, at most.
const MAX_MACRO_DEPTH: usize = 64;
/// Macro calls in one render, at most.
const MAX_MACRO_CALLS: usize = 20_000;
/// Instructions one model may run across all its macro calls: each call is
/// a render of its own with fresh fuel, so without a shared budget 20,000
/// calls of a busy macro ran for minutes. The engine charges a byte it
/// makes as 1/64 of a step, so this is also 640 MiB of text and values.
const MODEL_FUEL: u64 = 5 * FUEL;
/// Instructions all of a run's renders may use together: each model has
/// [`MODEL_FUEL`], and 500 tiny models each spinning near it took 80 s. A
/// generated project of 10,000 models uses 2.8 million; past this bound
/// (checked between batches of [`RENDER_BATCH`]) the models still to render
/// are reported, not rendered.
pub(crate) const RUN_FUEL: u64 = 2_000_000_000;
/// Models rendered between two checks of [`RUN_FUEL`].
pub(crate) const RENDER_BATCH: usize = 64;
/// The most fuel one model's renders can use: its own, and a macro call's
/// past [`MODEL_FUEL`] before the check after that call.
pub(crate) const MAX_MODEL_SPEND: u64 = MODEL_FUEL + 2 * FUEL;
/// Bytes of rendered SQL one load keeps, all models together: each model's
/// text is kept for its lineage, and 10,000 models of 128 MiB each (what
/// one model's fuel allows) would not fit in memory.
const RUN_RENDERED_BYTES: u64 = 1 << 30;

/// Template name prefix of macro files.
const MACRO_PREFIX: &str = "__macros__/";

/// A macro file, after `{% test %}`, `{% materialization %}`, `{% docs %}`
/// and `{% snapshot %}` blocks are stripped.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct MacroFile {
    /// Path relative to the project root.
    pub path: String,
    /// The package the file belongs to (`None` for the root project).
    pub package: Option<String>,
    /// The text.
    pub text: String,
}

/// A relation as dbt prints it, with the parts macros ask for.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Relation {
    /// Database, when configured.
    pub database: Option<String>,
    /// Schema.
    pub schema: String,
    /// Table or view name.
    pub identifier: String,
    /// Printed as an adapter that quotes every name prints it (dbt-postgres):
    /// a part in mixed case is quoted, so the SQL reading it names that
    /// table, not its lower-case namesake.
    #[serde(default, skip)]
    pub exact: bool,
}

impl Relation {
    /// `db.schema.identifier`, or `schema.identifier` without a database;
    /// a part holding a dot, a quote or white space in quotes.
    pub fn name(&self) -> String {
        crate::sql::relation_of_parts(
            self.database
                .as_deref()
                .into_iter()
                .chain([self.schema.as_str(), self.identifier.as_str()]),
        )
    }
}

impl Object for Relation {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        match key.as_str()? {
            "database" => Some(Value::from(self.database.clone())),
            "schema" => Some(Value::from(self.schema.clone())),
            "identifier" | "name" | "table" => Some(Value::from(self.identifier.clone())),
            "is_table" | "is_view" | "is_cte" => Some(Value::from(false)),
            // What dbt_utils' `_is_relation` checks.
            "metadata" => Some(context! { type => "BaseRelation" }),
            _ => None,
        }
    }

    // A relation is a value, not an empty mapping: `{% if not relation %}`
    // is false, as in dbt.
    fn is_true(self: &Arc<Self>) -> bool {
        true
    }

    // As SQL: a part that is not a plain identifier (`stg-orders`) is
    // quoted, as dbt's adapters quote it, or the model reading it would
    // not parse. The name ripple keys it by stays `name()`.
    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts = self
            .database
            .as_deref()
            .into_iter()
            .chain([self.schema.as_str(), self.identifier.as_str()]);
        for (i, part) in parts.enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            let plain = part
                .chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
                && part
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
                && !(self.exact && part.chars().any(char::is_uppercase));
            if plain {
                f.write_str(part)?;
            } else {
                write!(f, "\"{}\"", part.replace('"', "\"\""))?;
            }
        }
        Ok(())
    }
}

/// What rendering one template recorded.
#[derive(Debug, Default)]
pub(crate) struct Capture {
    /// `ref()` / `source()` calls, in call order.
    pub references: Mutex<Vec<Target>>,
    /// The relations those calls printed (see
    /// `sql::hard_coded::unexplained_digest`).
    pub printed: Mutex<Vec<String>>,
    /// `config()` keywords; later calls override earlier ones.
    pub config: Mutex<BTreeMap<String, serde_json::Value>>,
    /// Unknown macros and methods that were rendered as placeholders.
    pub unknown: Mutex<BTreeSet<String>>,
    /// Calls that read the run's clock (`modules.datetime.date.today()`),
    /// answered with dbt's fixed `run_started_at`.
    pub clock: Mutex<BTreeSet<String>>,
    /// Warehouse calls in the macros the render called: "`run_query` in
    /// macro `get_methods`" (see [`WAREHOUSE_CALLS`]).
    pub warehouse: Mutex<BTreeSet<String>>,
    /// The macros, to look up what each called macro asks the warehouse.
    table: Arc<MacroTable>,
    /// The value of the innermost `return()`.
    returned: Mutex<Option<Value>>,
    depth: AtomicUsize,
    calls: AtomicUsize,
    /// Fuel used by the macro calls that finished (see [`MODEL_FUEL`]).
    fuel: AtomicU64,
    /// Fuel used by the renders waiting for a macro call to return, up to
    /// their call: counted too, or 64 nested calls each used all of theirs.
    pending: AtomicU64,
    /// The package of the node rendered (`None`: the root project), whose
    /// vars `var()` reads, wherever in its macros it is called (as dbt's).
    package: Option<String>,
}

impl Object for Capture {}

/// Whether dbt's adapter quotes every name by default and its engine
/// keeps a quoted name's case (dbt-postgres: `"erp_raw"."ORDERS_Tbl"`), so a
/// declared name in mixed case is that exact table.
pub(crate) fn quotes_exact_case(adapter: &str) -> bool {
    crate::sql::SqlDialect::ALIASES
        .iter()
        .any(|(name, d)| *name == adapter && d.dbt_names_exact())
}

/// The key of a model version's relation among [`Relations::by_name`]
/// (a name no model can have).
pub(crate) fn versioned_key(name: &str, version: &str) -> String {
    format!("{name} v{version}")
}

/// Everything `ref()` and `source()` need to print relations.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Relations {
    /// Model, seed and snapshot relations by name.
    #[serde(deserialize_with = "sized::deserialize")]
    pub by_name: HashMap<String, Relation>,
    /// Source relations by (source, table).
    #[serde(with = "pairs")]
    pub sources: HashMap<(String, String), Relation>,
    /// Schema for names not found (dbt's target schema).
    pub default_schema: String,
    /// Database for names not found.
    pub default_database: Option<String>,
}

/// A map with pair keys as a list of entries (JSON keys are strings),
/// sorted so the same map writes the same text.
mod pairs {
    use std::collections::HashMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    type Map = HashMap<(String, String), super::Relation>;

    pub fn serialize<S: Serializer>(map: &Map, s: S) -> Result<S::Ok, S::Error> {
        let mut entries: Vec<_> = map.iter().collect();
        entries.sort_by(|a, b| a.0.cmp(b.0));
        entries.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Map, D::Error> {
        let entries: Vec<((String, String), super::Relation)> = Vec::deserialize(d)?;
        Ok(entries.into_iter().collect())
    }
}

/// A map read whole before it is built, so it is sized once: JSON gives
/// no length, and a map grown entry by entry rehashed 10,000 relations
/// over and over on every warm run that renders an edit.
mod sized {
    use std::collections::HashMap;

    use serde::de::{Deserializer, MapAccess, Visitor};

    type Map = HashMap<String, super::Relation>;

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Map, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = Map;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map of relations")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Map, A::Error> {
                let mut entries = Vec::new();
                while let Some(e) = m.next_entry()? {
                    entries.push(e);
                }
                Ok(entries.into_iter().collect())
            }
        }
        d.deserialize_map(Entries)
    }
}

/// The per-project settings the renderer needs.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct Settings {
    /// The root project's name.
    pub project_name: String,
    /// Merged `vars`.
    pub vars: BTreeMap<String, serde_json::Value>,
    /// Vars whose value is Jinja, as written: rendered where a model reads
    /// them, in its context, as dbt does (`"{{ ref('stg_app') }}"` is an
    /// edge of every model reading the var).
    #[serde(default)]
    pub jinja_vars: BTreeMap<String, String>,
    /// The vars a package's models see, by package, where they differ from
    /// the root project's (see `merged_vars` for dbt's precedence).
    #[serde(default)]
    pub package_vars: BTreeMap<String, PackageVars>,
    /// `target`.
    pub target: crate::config::TargetConfig,
    /// The adapter name dispatch tries before `default__` (`postgres`, ...).
    pub adapter: String,
    /// Relations for `ref()` / `source()`.
    pub relations: Relations,
    /// `dispatch:` of `dbt_project.yml`: macro namespace → the packages to
    /// search, in order (the root project by its name).
    pub dispatch: BTreeMap<String, Vec<String>>,
}

/// One package's view of the vars: as [`Settings::vars`] and
/// [`Settings::jinja_vars`] are the root project's.
#[derive(Debug, Default, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct PackageVars {
    /// Every var, rendered.
    pub vars: BTreeMap<String, serde_json::Value>,
    /// Those whose value is Jinja, as written.
    pub jinja_vars: BTreeMap<String, String>,
}

/// A Jinja environment loaded with dbt's built-ins and a project's macros.
pub(crate) struct Renderer {
    env: Environment<'static>,
    /// Every name defined before placeholders were added.
    defined: Arc<BTreeSet<String>>,
    /// Macro name → (template, package), for dispatch and package namespaces.
    macros: Arc<MacroTable>,
    /// Bytes of SQL rendered so far (see [`RUN_RENDERED_BYTES`]).
    rendered: AtomicU64,
    /// The bound on `rendered` ([`RUN_RENDERED_BYTES`]; tests lower it).
    run_limit: u64,
    /// Fuel all renders have used so far (see [`RUN_FUEL`]).
    fuel_spent: AtomicU64,
    /// The bound on `fuel_spent` ([`RUN_FUEL`]; tests lower it).
    run_fuel: u64,
    /// Whether `fuel_spent` passed `run_fuel` when last settled: renders
    /// check this, not the running total, so that which models are refused
    /// depends on the order of batches, not of threads.
    spent_out: std::sync::atomic::AtomicBool,
}

#[derive(Debug, Default)]
struct MacroTable {
    /// Root-project macros (and package macros nobody overrides).
    global: HashMap<String, String>,
    /// Package macros by (package, macro).
    by_package: HashMap<(String, String), String>,
    /// Package names that have macros.
    packages: BTreeSet<String>,
    /// The root project's own macros.
    root: HashMap<String, String>,
    /// A naming hook the root project overrides through dbt's dispatch:
    /// its name → the macro that stands for it (`default__generate_schema_name`).
    hook_names: HashMap<String, String>,
    /// A macro's template (one per macro block) → the first warehouse call
    /// in its body.
    warehouse: HashMap<String, String>,
    /// Each var of [`Settings::jinja_vars`] (package `None`) and of
    /// [`Settings::package_vars`], by (package, name) → the template
    /// rendering it (a macro [`VAR_MACRO`]), or why it does not compile.
    vars: HashMap<(Option<String>, String), Result<String, String>>,
}

/// The macro each Jinja var is rendered by (see [`MacroTable::vars`]).
const VAR_MACRO: &str = "__ripple_var";

/// A template that failed, with where.
#[derive(Debug, Clone)]
pub(crate) struct RenderError {
    /// 1-based line in the template, 0 when unknown.
    pub line: u32,
    /// What went wrong, without minijinja's location suffix.
    pub message: String,
}

/// The names of unknown calls: per model source, and those of the macro
/// files together.
#[derive(Debug, Clone, Default)]
pub(crate) struct Calls {
    /// Per source, in order.
    pub sources: Vec<Vec<(String, bool)>>,
    /// Of every macro file.
    pub macros: Vec<(String, bool)>,
}

impl Calls {
    /// Every name called (what becomes a placeholder).
    pub fn union(&self) -> BTreeSet<(String, bool)> {
        self.sources
            .iter()
            .flatten()
            .chain(&self.macros)
            .cloned()
            .collect()
    }
}

/// The names `text` calls that are neither defined nor keywords, each once.
fn unknown_calls(text: &str, defined: &BTreeSet<String>) -> Vec<(String, bool)> {
    called_names(text)
        .filter(|(name, _)| !defined.contains(*name) && !is_keyword(name))
        .map(|(name, dotted)| (name.to_string(), dotted))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

type Base = (
    Environment<'static>,
    Arc<MacroTable>,
    Vec<(String, RenderError)>,
    BTreeSet<String>,
);

/// An environment with dbt's built-ins and the macros of `macro_files`,
/// its macro table, the macros that failed to compile, and every name it
/// defines.
fn environment(settings: Settings, macro_files: &[MacroFile]) -> Base {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Chainable);
    env.set_fuel(Some(FUEL));
    env.set_unknown_method_callback(unknown_method);
    compat::add_mutable_containers(&mut env);
    env.set_formatter(compat::python_formatter);
    let settings = Arc::new(settings);
    let mut errors = Vec::new();

    let mut table = MacroTable::default();
    // Package files first, so that root-project macros override them.
    let mut files: Vec<&MacroFile> = macro_files.iter().collect();
    files.sort_by_key(|f| (f.package.is_none(), f.path.clone()));
    // A root-project `ref` or `source` macro replaces dbt's (reaching
    // it through `builtins.ref`).
    let mut overrides: Vec<(String, String)> = Vec::new();
    for file in &files {
        // Its rewrites parse the file: on a stack sized for its chains.
        let text = match guard::on_stack(&file.text, false, || compat::prepare(&file.text)) {
            Ok(text) => text,
            Err(no_stack) => {
                errors.push((
                    file.path.clone(),
                    RenderError {
                        line: 0,
                        message: no_stack.to_string(),
                    },
                ));
                continue;
            }
        };
        for block in macro_blocks(&text) {
            let template = format!("{MACRO_PREFIX}{}#{}", file.path, block.name);
            // Leading newlines keep the block's lines the file's lines.
            let lines = text[..block.start].matches('\n').count();
            let source = format!(
                "{}{}",
                "\n".repeat(lines),
                rename_definitions(&text[block.start..block.end])
            );
            // Compiled on a stack sized for its longest chain.
            let added = guard::on_stack(&source, false, || {
                if let Some((line, message)) = guard::chain_too_long(&source) {
                    return Err(RenderError { line, message });
                }
                env.add_template_owned(template.clone(), source.clone())
                    .map_err(|e| compile_error(&e))
            })
            .unwrap_or_else(|no_stack| {
                Err(RenderError {
                    line: 0,
                    message: no_stack.to_string(),
                })
            });
            if let Err(mut e) = added {
                e.message = format!("macro `{}`: {}", block.name, e.message);
                errors.push((file.path.clone(), e));
                continue;
            }
            let body = &text[block.body_start..block.body_end];
            if let Some(call) = macro_warehouse_call(body) {
                table.warehouse.insert(template.clone(), call);
            }
            let name = block.name;
            match &file.package {
                Some(pkg) => {
                    table
                        .by_package
                        .insert((pkg.clone(), name.clone()), template.clone());
                    table.packages.insert(pkg.clone());
                }
                None => {
                    if name == "ref" || name == "source" {
                        overrides.push((name.clone(), template.clone()));
                    }
                    table.root.insert(name.clone(), template.clone());
                    // `my_project.my_macro()` in the project named so: dbt
                    // takes the root project's name as a namespace too.
                    if !settings.project_name.is_empty() {
                        table.by_package.insert(
                            (settings.project_name.clone(), name.clone()),
                            template.clone(),
                        );
                    }
                }
            }
            table.global.insert(name, template);
        }
    }
    if !matches!(
        settings.project_name.as_str(),
        "" | "dbt" | "adapter" | "modules" | "api"
    ) {
        table.packages.insert(settings.project_name.clone());
    }
    // Vars holding Jinja: each a macro of its own, so that rendering one
    // where a model reads it shares the model's capture, fuel and depth.
    let scopes = std::iter::once((None, &settings.jinja_vars)).chain(
        settings
            .package_vars
            .iter()
            .map(|(p, v)| (Some(p.as_str()), &v.jinja_vars)),
    );
    for (package, name, raw) in
        scopes.flat_map(|(p, vars)| vars.iter().map(move |(n, raw)| (p, n, raw)))
    {
        let scope = package.map(|p| format!("{p}/")).unwrap_or_default();
        let template = format!("{MACRO_PREFIX}vars/{scope}{name}#{VAR_MACRO}");
        let text = format!("{{% macro {VAR_MACRO}() %}}{raw}{{% endmacro %}}");
        let added = guard::on_stack(&text, false, || {
            if let Some((_, message)) = guard::chain_too_long(&text) {
                return Err(message);
            }
            let source = rename_definitions(&compat::prepare(&text));
            env.add_template_owned(template.clone(), source)
                .map_err(|e| compile_error(&e).message)
        })
        .unwrap_or_else(|no_stack| Err(no_stack.to_string()));
        table.vars.insert(
            (package.map(str::to_string), name.clone()),
            added.map(|()| template),
        );
    }
    // dbt's own naming macros dispatch (`adapter.dispatch('generate_schema_name',
    // 'dbt')`): a root project that defines `default__generate_schema_name`
    // or `<adapter>__...` instead of the macro itself overrides it so (once
    // ignored: every relation of such a project was the default one).
    for hook in [
        "generate_database_name",
        "generate_schema_name",
        "generate_alias_name",
    ] {
        if table.root.contains_key(hook) {
            continue;
        }
        let found = builtins::adapter_prefixes(&settings.adapter)
            .into_iter()
            .map(|p| format!("{p}__{hook}"))
            .find(|n| table.root.contains_key(n));
        if let Some(actual) = found {
            table.hook_names.insert(hook.to_string(), actual);
        }
    }
    let table = Arc::new(table);
    for (name, template) in &table.global {
        env.add_function(name.clone(), macro_caller(template.clone(), name.clone()));
    }
    add_builtins(&mut env, &settings, &table);
    pymodules::add(&mut env);
    for (name, template) in overrides {
        env.add_function(name.clone(), macro_caller(template, name));
    }
    // Macros hand their arguments to templates, which guard what they
    // print (`call_macro` checks only their nesting); `config()` measures
    // each value it converts, once: it runs on nearly every model.
    guard::install(&mut env, compat::is_mutable_dict, &|name| {
        name == "config" || table.global.contains_key(name)
    });

    let defined: BTreeSet<String> = env.globals().map(|(n, _)| n.to_string()).collect();
    (env, table, errors, defined)
}

/// The renderer: `env` with a placeholder for every name in `called`.
fn finish(
    mut env: Environment<'static>,
    table: Arc<MacroTable>,
    defined: BTreeSet<String>,
    called: BTreeSet<(String, bool)>,
) -> Renderer {
    let mut unknown = BTreeSet::new();
    let mut namespaces = BTreeSet::new();
    for (name, dotted) in called {
        if dotted {
            namespaces.insert(name.clone());
        }
        unknown.insert(name);
    }
    for name in unknown {
        if namespaces.contains(&name) {
            env.add_global(
                name.clone(),
                Value::from_object(Namespace::placeholder(&name)),
            );
            continue;
        }
        let recorded = name.clone();
        env.add_function(
            name,
            move |state: &State, _args: Rest<ValueOrKwargs>| -> Result<Value, Error> {
                if let Some(cap) = capture(state) {
                    lock(&cap.unknown).insert(recorded.clone());
                }
                Ok(Value::from_safe_string(PLACEHOLDER.to_string()))
            },
        );
    }
    Renderer {
        env,
        macros: table,
        defined: Arc::new(defined),
        rendered: AtomicU64::new(0),
        run_limit: RUN_RENDERED_BYTES,
        fuel_spent: AtomicU64::new(0),
        run_fuel: RUN_FUEL,
        spent_out: std::sync::atomic::AtomicBool::new(false),
    }
}

impl Renderer {
    /// Builds the environment: built-ins, macros, and placeholders for every
    /// other name that `sources` (the templates to come) call.
    #[cfg(test)]
    pub fn new<'a>(
        settings: Settings,
        macro_files: &'a [MacroFile],
        sources: impl IntoIterator<Item = &'a str>,
    ) -> (Renderer, Vec<(String, RenderError)>) {
        let sources: Vec<&str> = sources.into_iter().collect();
        let (renderer, errors, _) = Renderer::with_calls(settings, macro_files, &sources);
        (renderer, errors)
    }

    /// [`Renderer::new`], also returning the unknown names each source
    /// calls (in the sources' order) and those the macro files call: what
    /// a snapshot keeps to tell whether an edited model changes the set.
    pub fn with_calls(
        settings: Settings,
        macro_files: &[MacroFile],
        sources: &[&str],
    ) -> (Renderer, Vec<(String, RenderError)>, Calls) {
        let (env, table, errors, defined) = environment(settings, macro_files);
        let macro_texts: Vec<&str> = macro_files.iter().map(|f| f.text.as_str()).collect();
        // Every model's text is scanned, on all cores.
        let scan = |texts: &[&str]| -> Vec<Vec<(String, bool)>> {
            use rayon::prelude::*;
            texts
                .par_iter()
                .map(|text| unknown_calls(text, &defined))
                .collect()
        };
        let calls = Calls {
            sources: scan(sources),
            macros: scan(&macro_texts)
                .into_iter()
                .flatten()
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect(),
        };
        let all = calls.union();
        let renderer = finish(env, table, defined, all);
        (renderer, errors, calls)
    }

    /// A renderer whose placeholders are exactly `calls` (a set kept from
    /// an earlier [`Renderer::with_calls`] over the same macro files).
    pub fn from_calls(
        settings: Settings,
        macro_files: &[MacroFile],
        calls: BTreeSet<(String, bool)>,
    ) -> (Renderer, Vec<(String, RenderError)>) {
        let (env, table, errors, defined) = environment(settings, macro_files);
        (finish(env, table, defined, calls), errors)
    }

    /// The names `text` calls that nothing defines: what it adds to the
    /// placeholders.
    pub fn calls_of(&self, text: &str) -> Vec<(String, bool)> {
        unknown_calls(text, &self.defined)
    }

    /// Renders `text` (the file `name`) as the node `this`, returning the
    /// SQL and what it recorded. On failure the capture keeps what was
    /// recorded before the error.
    #[cfg(test)]
    pub fn render(
        &self,
        name: &str,
        text: &str,
        this: Relation,
        model_name: &str,
    ) -> (Result<String, RenderError>, Capture) {
        self.render_in(None, name, text, this, model_name)
    }

    /// [`Renderer::render`] for a node of `package` (`None`: the root
    /// project), which sees that package's vars.
    pub fn render_in(
        &self,
        package: Option<&str>,
        name: &str,
        text: &str,
        this: Relation,
        model_name: &str,
    ) -> (Result<String, RenderError>, Capture) {
        let capture = Arc::new(Capture {
            table: self.macros.clone(),
            package: package.map(str::to_string),
            ..Capture::default()
        });
        let ctx = context! {
            __ripple => Value::from_dyn_object(capture.clone()),
            this => Value::from_object(this),
            model => context! { name => model_name, unique_id => format!("model.{model_name}") },
        };
        // Parsed and run on a stack sized for the text's longest chain and
        // Parsed and run on a stack sized for the text's longest chain and
        // for the deepest value its fuel can build. A template whose code
        // prints values with `~` or `in`, or assigns to a namespace, is
        // compiled again with those written as guarded calls.
        if self.spent_out.load(Ordering::Relaxed) {
            let error = RenderError {
                line: 0,
                message: format!(
                    "the project's templates used more than the {} steps of fuel a run allows before this model; it is not rendered. Which models spin? Look for a loop that runs away in those reported with `fuel`, or in the slowest to render",
                    self.run_fuel
                ),
            };
            return (Err(error), Capture::default());
        }
        // A render that fails is charged all it was given: it may have
        // failed for want of fuel.
        let mut top_fuel = FUEL;
        let result = guard::on_stack_for_text(text, true, || {
            let prepared = compat::python_literals(text);
            if let Some((line, message)) = guard::chain_too_long(&prepared) {
                return Err(RenderError { line, message });
            }
            let tmpl = self
                .env
                .template_from_named_str(name, &prepared)
                .map_err(|e| render_error(&e))?;
            let dates = guard::uses_dates(&prepared);
            // A `~` of constants is folded as the engine prints them
            // (`'t_' ~ 1e16` → `t_10000000000000000.0`, Python's `t_1e+16`)
            // and leaves no instruction to find: a `~` anywhere is looked at.
            let run = |t: &minijinja::Template| {
                t.render_captured(ctx).map(|c| {
                    top_fuel = c.state().fuel_levels().map_or(0, |(used, _)| used);
                    c.into_output()
                })
            };
            if !dates && !guard::prints_values(&tmpl) && !prepared.contains('~') {
                return run(&tmpl).map_err(|e| render_error(&e));
            }
            let guarded = guard::rewrite_found(&prepared, dates);
            self.env
                .template_from_named_str(name, &guarded)
                .and_then(|t| run(&t))
                .map_err(|e| render_error(&e))
        })
        .unwrap_or_else(|no_stack| {
            Err(RenderError {
                line: 0,
                message: no_stack.to_string(),
            })
        });
        let spent = top_fuel + capture.fuel.load(Ordering::Relaxed);
        self.fuel_spent.fetch_add(spent, Ordering::Relaxed);
        let result = result.and_then(|sql| {
            let total = self.rendered.fetch_add(sql.len() as u64, Ordering::Relaxed) + sql.len() as u64;
            if total > self.run_limit {
                return Err(RenderError {
                    line: 0,
                    message: format!(
                        "the project's rendered SQL passed {} MiB with this model ({} bytes); it is not kept. Is a macro repeating its output? Models this large cannot be read together",
                        self.run_limit >> 20,
                        sql.len()
                    ),
                });
            }
            Ok(sql)
        });
        let capture = Arc::try_unwrap(capture).unwrap_or_else(|shared| Capture {
            references: Mutex::new(lock(&shared.references).clone()),
            printed: Mutex::new(lock(&shared.printed).clone()),
            config: Mutex::new(lock(&shared.config).clone()),
            unknown: Mutex::new(lock(&shared.unknown).clone()),
            warehouse: Mutex::new(lock(&shared.warehouse).clone()),
            ..Capture::default()
        });
        (result, capture)
    }

    /// Settles the run's fuel between batches of renders (see
    /// [`RUN_FUEL`]): once past it, every later render is refused.
    pub fn settle(&self) {
        if self.fuel_spent.load(Ordering::Relaxed) > self.run_fuel {
            self.spent_out.store(true, Ordering::Relaxed);
        }
    }

    /// Whether the run's fuel ran out (some models were refused).
    pub fn spent_out(&self) -> bool {
        self.spent_out.load(Ordering::Relaxed)
    }

    /// Fuel all renders have used so far.
    pub fn fuel_spent(&self) -> u64 {
        self.fuel_spent.load(Ordering::Relaxed)
    }

    /// Whether the root project defines the macro `name` (a hook
    /// [`Renderer::call_hook`] would call).
    pub fn has_hook(&self, name: &str) -> bool {
        self.macros.root.contains_key(name) || self.macros.hook_names.contains_key(name)
    }

    /// Calls the macro `name` (a project override of a dbt hook such as
    /// `generate_schema_name`), if the project defines one.
    pub fn call_hook(&self, name: &str, args: &[Value]) -> Option<Result<String, RenderError>> {
        // The root project's only: dbt ignores a package's naming macros
        // (one once renamed every root model's schema).
        let name = self
            .macros
            .hook_names
            .get(name)
            .map_or(name, String::as_str);
        let template = self.macros.root.get(name)?;
        let capture = Arc::new(Capture::default());
        let tmpl = match self.env.get_template(template) {
            Ok(t) => t,
            Err(e) => return Some(Err(render_error(&e))),
        };
        let result = guard::on_stack("", true, || {
            tmpl.render_captured(context! { __ripple => Value::from_dyn_object(capture.clone()) })
                .and_then(|mut c| {
                    c.with_state_mut(|st| st.call_macro(&definition_name(name), args))
                })
        });
        let result = match result {
            Ok(result) => result,
            Err(no_stack) => {
                return Some(Err(RenderError {
                    line: 0,
                    message: no_stack.to_string(),
                }));
            }
        };
        let result = match result {
            Err(_) if lock(&capture.returned).is_some() => Ok(lock(&capture.returned)
                .take()
                .unwrap_or_default()
                .to_string()),
            other => other,
        };
        Some(
            result
                .map(|s| s.trim().to_string())
                .map_err(|e| render_error(&e)),
        )
    }
}

/// A namespace that renders as the placeholder (`modules.os`), as a value.
fn placeholder_namespace(name: &str) -> Option<Value> {
    Some(Value::from_object(builtins::Namespace::placeholder(name)))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic inside a Jinja callback cannot leave these half-written.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn capture(state: &State) -> Option<Arc<Capture>> {
    state.lookup("__ripple")?.downcast_object::<Capture>()
}

/// `e` where a model renders: an error inside a macro says which macro, file
/// and line (see [`compile_error`] for an error in the file itself).
fn render_error(e: &Error) -> RenderError {
    let RenderError { line, message } = compile_error(e);
    // An error inside a macro has the macro file's line: given as the
    // model's, it pointed at a line of the model that says nothing of it.
    if let Some((file, name)) = e
        .name()
        .and_then(|n| n.strip_prefix(MACRO_PREFIX))
        .and_then(|n| n.rsplit_once('#'))
    {
        let place = match (file.strip_prefix("vars/"), name == VAR_MACRO) {
            (Some(var), true) => format!("in var `{var}`"),
            _ if line > 0 => format!("in macro `{name}` ({file} line {line})"),
            _ => format!("in macro `{name}` ({file})"),
        };
        return RenderError {
            line: 0,
            message: format!("{place}: {message}"),
        };
    }
    RenderError { line, message }
}

/// `e` with the line of the template it arose in.
fn compile_error(e: &Error) -> RenderError {
    let detail = e.detail().map(str::to_string);
    let message = match (e.kind(), detail) {
        // The engine's own words (`engine ran out of fuel`) say neither
        // what the bound is nor what to look at.
        (ErrorKind::OutOfFuel, _) => format!(
            "the template ran out of fuel: it ran more than ripple's limit of {FUEL} steps (a byte made costs 1/64 of a step) and was stopped; is a loop, a `range()` or a repetition runaway?"
        ),
        (_, Some(d)) => format!(
            "{}: {}",
            e.kind(),
            crate::text::clipped(&d, crate::text::MESSAGE_QUOTE)
        ),
        (kind, None) => kind.to_string(),
    };
    RenderError {
        line: e.line().unwrap_or(0) as u32,
        message,
    }
}

/// Methods minijinja lacks: Python's string and dict methods from
/// minijinja-contrib, and a placeholder for anything else (dbt relation
/// methods, `strftime`, ...).
fn unknown_method(
    state: &mut State,
    value: &Value,
    method: &str,
    args: &[Value],
) -> Result<Value, Error> {
    if value.downcast_object_ref::<Relation>().is_some() {
        return Ok(value.clone());
    }
    // Python's methods turn lists into text (`''.join(xs)`), and widths
    // and separators make text their input does not bound
    // (`'{:>1000000000}'.format(1)`): measured first, and refused as the
    // model's error, never as a placeholder.
    guard::check_method(state, value, method, args)?;
    if let Some(refused) = compat::immutable(value, method) {
        return Err(refused);
    }
    let called = minijinja_contrib::pycompat::unknown_method_callback(state, value, method, args);
    // `.split()` makes a list the template may append to, as in Python.
    let called = match called {
        Ok(made) if matches!(method, "split" | "rsplit" | "splitlines") => compat::mutable(made),
        other => other,
    };
    called.or_else(|_| {
        if let Some(cap) = capture(state) {
            lock(&cap.unknown).insert(format!(".{method}()"));
        }
        Ok(Value::from_safe_string(PLACEHOLDER.to_string()))
    })
}

/// A function that renders macro `name` from `template` with the caller's
/// capture, and turns a `return()` into the call's value.
fn macro_caller(
    template: String,
    name: String,
) -> impl Fn(&State, Rest<ValueOrKwargs>) -> Result<Value, Error> + Send + Sync + 'static {
    move |state: &State, args: Rest<ValueOrKwargs>| {
        // Keyword arguments travel on to the macro untouched.
        let args: Vec<Value> = args.0.into_iter().map(ValueOrKwargs::into_value).collect();
        // A node of package P finds P's own macro of that name first, as
        // dbt's namespace puts a node's package before the root project's
        // (a package model once took the root's `tbl()`, another ref).
        let local = capture(state).and_then(|cap| {
            let package = cap.package.clone()?;
            cap.table.by_package.get(&(package, name.clone())).cloned()
        });
        call_macro(state, local.as_deref().unwrap_or(&template), &name, &args)
    }
}

fn call_macro(state: &State, template: &str, name: &str, args: &[Value]) -> Result<Value, Error> {
    let cap = capture(state);
    if let Some(cap) = &cap {
        if let Some(call) = cap.table.warehouse.get(template) {
            lock(&cap.warehouse).insert(if call.rsplit('.').next() == Some(name) {
                format!("`{call}`")
            } else {
                format!("`{call}` in macro `{name}`")
            });
        }
        let calls = cap.calls.fetch_add(1, Ordering::Relaxed);
        let depth = cap.depth.fetch_add(1, Ordering::Relaxed);
        if let Err(e) = model_fuel_left(cap, state, name) {
            cap.depth.fetch_sub(1, Ordering::Relaxed);
            return Err(e);
        }
        if depth >= MAX_MACRO_DEPTH || calls >= MAX_MACRO_CALLS {
            cap.depth.fetch_sub(1, Ordering::Relaxed);
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!(
                    "macro `{name}` nested or repeated too often (depth {MAX_MACRO_DEPTH}, calls {MAX_MACRO_CALLS}); is it recursive?"
                ),
            ));
        }
    }
    // What crosses into another render is checked for nesting: each render
    // has fuel of its own, so a value nested further by each would grow
    // past what one render can build.
    if let Err(e) = guard::check_depth(format_args!("macro `{name}`"), args) {
        if let Some(cap) = &cap {
            cap.depth.fetch_sub(1, Ordering::Relaxed);
        }
        return Err(e);
    }
    // The caller's fuel so far counts while it waits.
    let waiting = state.fuel_levels().map_or(0, |(consumed, _)| consumed);
    if let Some(cap) = &cap {
        cap.pending.fetch_add(waiting, Ordering::Relaxed);
    }
    let result = (|| {
        let tmpl = state.env().get_template(template)?;
        let ctx = context! {
            __ripple => state.lookup("__ripple"),
            this => state.lookup("this"),
            model => state.lookup("model"),
        };
        let mut rendered = tmpl.render_captured(ctx)?;
        let (result, consumed) = rendered.with_state_mut(|st| {
            let result = st.call_macro(&definition_name(name), args);
            (result, st.fuel_levels().map_or(0, |(consumed, _)| consumed))
        });
        if let Some(cap) = &cap {
            cap.fuel.fetch_add(consumed, Ordering::Relaxed);
        }
        result
    })();
    if let Some(cap) = &cap {
        cap.depth.fetch_sub(1, Ordering::Relaxed);
        cap.pending.fetch_sub(waiting, Ordering::Relaxed);
    }
    let value = match result {
        Ok(out) => {
            let returned = cap.as_ref().and_then(|c| lock(&c.returned).take());
            returned.unwrap_or_else(|| Value::from_safe_string(out))
        }
        Err(e) => match cap.as_ref().and_then(|c| lock(&c.returned).take()) {
            Some(value) => value,
            None => return Err(e),
        },
    };
    // The call's fuel is counted now: the caller may not go on past the
    // model's budget until its next call. Its arguments (a namespace or
    // list it changed) and what it returns cross back.
    if let Some(cap) = &cap {
        model_fuel_left(cap, state, name)?;
    }
    guard::check_depth(format_args!("macro `{name}`"), args)?;
    guard::check_depth(format_args!("macro `{name}`"), std::slice::from_ref(&value))?;
    Ok(value)
}

/// Refuses to go on once the model's renders together (those finished,
/// those waiting for a call, and the one running in `state`) have used
/// [`MODEL_FUEL`].
fn model_fuel_left(cap: &Capture, state: &State, name: &str) -> Result<(), Error> {
    let used = cap.fuel.load(Ordering::Relaxed)
        + cap.pending.load(Ordering::Relaxed)
        + state.fuel_levels().map_or(0, |(consumed, _)| consumed);
    if used > MODEL_FUEL {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!(
                "the model's templates ran out of fuel calling `{name}` ({MODEL_FUEL} steps across all macro calls, a byte made costing 1/64 of a step); is a loop runaway?"
            ),
        ));
    }
    Ok(())
}

/// Whether `text` holds a Jinja expression or statement to render.
pub(crate) fn holds_jinja(text: &str) -> bool {
    text.contains("{{") || text.contains("{%")
}

/// A config value rendered, or why not and whether a bound refused it.
type Rendered = Result<String, (String, bool)>;

/// Renders the Jinja in `dbt_project.yml` and property values
/// (`+enabled: "{{ var('x', false) }}"`) with `var`, `env_var` and `target`.
pub(crate) struct ConfigRenderer {
    env: Environment<'static>,
    /// Values whose Jinja failed to render (kept as written), and why.
    failed: Mutex<BTreeMap<String, String>>,
    /// Each text's rendering: a value is the same wherever it applies (its
    /// context is the project's), and one in `dbt_project.yml` applies to
    /// every model: rendered again for each, a slow one cost minutes.
    rendered: Mutex<HashMap<String, Rendered>>,
}

impl ConfigRenderer {
    /// A renderer for config values with these vars and target.
    pub fn new(
        vars: &BTreeMap<String, serde_json::Value>,
        target: &crate::config::TargetConfig,
    ) -> ConfigRenderer {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Chainable);
        env.set_fuel(Some(FUEL));
        let vars = vars.clone();
        env.add_function("var", move |name: String, default: Option<Value>| {
            var(&vars, &name, default)
        });
        env.add_function("env_var", env_var);
        // `{{ target.schema.replace('_dev', '') }}`: Python's string methods,
        // and what they and printing make measured before it is made
        // (`+alias: "{{ '{:>1000000000}'.format(1) }}"` once aborted the
        // process).
        env.set_unknown_method_callback(guard::python_method);
        env.set_formatter(|out, state, value| {
            // dbt refuses to print what its context lacks
            // (`+alias: "{{ target.nosuch }}"`): never an empty name.
            if value.is_undefined() {
                return Err(minijinja::Error::new(
                    minijinja::ErrorKind::UndefinedError,
                    "it prints a value that is not defined here",
                ));
            }
            guard::check_shown(state, "printing a value", std::slice::from_ref(value))?;
            minijinja::escape_formatter(out, state, value)
        });
        // dbt's `modules` are in a config value's context too.
        pymodules::add(&mut env);
        env.add_global(
            "target",
            context! { name => target.name.clone(), schema => target.schema.clone(), database => target.database.clone() },
        );
        guard::install(&mut env, |_| false, &|_| false);
        ConfigRenderer {
            env,
            failed: Mutex::default(),
            rendered: Mutex::default(),
        }
    }

    /// A name (a source's database, schema or identifier) with its Jinja
    /// rendered, or the renderer's reason why not.
    pub fn render_name(&self, text: &str) -> Result<String, String> {
        self.render_text(text).map_err(|(reason, _)| reason)
    }

    /// [`ConfigRenderer::render_name`], the reason saying too whether a
    /// bound refused the text (what it would make, its nesting, its stack).
    fn render_text(&self, text: &str) -> Rendered {
        if !holds_jinja(text) {
            return Ok(text.to_string());
        }
        if let Some(done) = lock(&self.rendered).get(text) {
            return done.clone();
        }
        let done = self.render_once(text);
        lock(&self.rendered).insert(text.to_string(), done.clone());
        done
    }

    /// [`ConfigRenderer::render_text`] the first time `text` is met.
    fn render_once(&self, text: &str) -> Rendered {
        if let Some((_, message)) = guard::chain_too_long(text) {
            return Err((message, true));
        }
        let text = guard::rewrite_dbt_operators(text);
        // No macros here: only statements build values in loops.
        let loops = text.contains("{%");
        match guard::on_stack(&text, loops, || self.env.render_str(&text, ())) {
            Ok(Ok(out)) => Ok(out.trim().to_string()),
            Ok(Err(e)) => Err((
                e.to_string(),
                guard::is_refusal(&e) || e.kind() == minijinja::ErrorKind::UndefinedError,
            )),
            Err(no_stack) => Err((no_stack.to_string(), true)),
        }
    }

    /// The values [`ConfigRenderer::render`] kept as written because a
    /// bound refused their Jinja (a width of a billion) or they print what is
    /// not defined, each once, with the reason. Other failures (a hook calling a macro, which no config value
    /// can) are dbt's to report, as before.
    pub fn failures(&self) -> Vec<(String, String)> {
        lock(&self.failed)
            .iter()
            .map(|(text, reason)| (text.clone(), reason.clone()))
            .collect()
    }

    /// `value` with the Jinja in its strings rendered; `"True"`/`"false"`
    /// become booleans, as YAML would have read them.
    pub fn render(&self, value: serde_json::Value) -> serde_json::Value {
        use serde_json::Value as J;
        match value {
            J::String(s) if holds_jinja(&s) => match self.render_text(&s) {
                Ok(out) => match out.as_str() {
                    "True" | "true" => J::Bool(true),
                    "False" | "false" => J::Bool(false),
                    _ => J::String(out),
                },
                Err((reason, refused)) => {
                    if refused {
                        lock(&self.failed).entry(s.clone()).or_insert(reason);
                    }
                    J::String(s)
                }
            },
            J::Array(items) => J::Array(items.into_iter().map(|v| self.render(v)).collect()),
            J::Object(map) => {
                J::Object(map.into_iter().map(|(k, v)| (k, self.render(v))).collect())
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn settings() -> Settings {
        let mut relations = Relations {
            default_schema: "analytics".into(),
            ..Relations::default()
        };
        relations.sources.insert(
            ("raw".into(), "orders".into()),
            Relation {
                database: None,
                schema: "raw".into(),
                identifier: "orders".into(),
                exact: false,
            },
        );
        Settings {
            project_name: "shop".into(),
            vars: [("start".to_string(), serde_json::json!("2025-01-01"))].into(),
            jinja_vars: BTreeMap::new(),
            package_vars: BTreeMap::new(),
            target: crate::config::TargetConfig::default(),
            adapter: "postgres".into(),
            relations,
            dispatch: BTreeMap::new(),
        }
    }

    pub(super) fn this() -> Relation {
        Relation {
            database: None,
            schema: "analytics".into(),
            identifier: "m".into(),
            exact: false,
        }
    }

    pub(super) fn render(
        macros: &[(&str, Option<&str>, &str)],
        model: &str,
    ) -> (Result<String, RenderError>, Capture) {
        let files: Vec<MacroFile> = macros
            .iter()
            .map(|(p, pkg, t)| MacroFile {
                path: p.to_string(),
                package: pkg.map(str::to_string),
                text: strip_non_macro_blocks(t),
            })
            .collect();
        let (r, errors) = Renderer::new(settings(), &files, [model]);
        assert!(errors.is_empty(), "{errors:?}");
        r.render("models/m.sql", model, this(), "m")
    }

    fn refs(c: &Capture) -> Vec<Target> {
        lock(&c.references).clone()
    }

    #[test]
    fn the_root_projects_name_is_a_namespace_of_its_macros() {
        // Fivetran's packages call their own macros as `stripe_source.x()`.
        let (sql, cap) = render(
            &[(
                "macros/t.sql",
                None,
                "{% macro tbl() %}{{ ref('stg_orders') }}{% endmacro %}",
            )],
            "select * from {{ shop.tbl() }}",
        );
        assert_eq!(sql.unwrap(), "select * from analytics.stg_orders");
        assert!(lock(&cap.unknown).is_empty(), "{:?}", lock(&cap.unknown));
        assert_eq!(refs(&cap).len(), 1);
    }

    #[test]
    fn a_name_that_is_no_plain_identifier_renders_quoted() {
        let (sql, _) = render(
            &[],
            "select * from {{ ref('stg-orders') }} join {{ ref('ok_2') }} using (id) join {{ ref('2024_x') }} using (id) join {{ ref('a\"b') }} using (id)",
        );
        assert_eq!(
            sql.unwrap(),
            "select * from analytics.\"stg-orders\" join analytics.ok_2 using (id) join analytics.\"2024_x\" using (id) join analytics.\"a\"\"b\" using (id)"
        );
    }

    #[test]
    fn ref_source_and_config_are_captured() {
        let (sql, cap) = render(
            &[],
            "{{ config(materialized='incremental', unique_key='id', tags=['daily']) }}\nselect * from {{ ref('stg_orders') }} join {{ source('raw', 'orders') }} using (id) join {{ ref('pkg', 'x', v=2) }}",
        );
        let sql = sql.unwrap();
        assert!(
            sql.contains("from analytics.stg_orders join raw.orders"),
            "{sql}"
        );
        assert_eq!(
            refs(&cap),
            [
                Target::Ref {
                    package: None,
                    name: "stg_orders".into(),
                    version: None
                },
                Target::Source {
                    source: "raw".into(),
                    table: "orders".into()
                },
                Target::Ref {
                    package: Some("pkg".into()),
                    name: "x".into(),
                    version: Some("2".into())
                },
            ]
        );
        let config = lock(&cap.config);
        assert_eq!(config["materialized"], "incremental");
        assert_eq!(config["tags"], serde_json::json!(["daily"]));
    }

    #[test]
    fn is_incremental_renders_false_and_this_prints_the_relation() {
        let (sql, cap) = render(
            &[],
            "select * from {{ ref('a') }}{% if is_incremental() %} where t > (select max(t) from {{ this }}){% endif %} -- {{ this }}",
        );
        assert_eq!(sql.unwrap(), "select * from analytics.a -- analytics.m");
        assert_eq!(refs(&cap).len(), 1);
    }

    #[test]
    fn macros_that_wrap_ref_still_yield_the_edge() {
        let (_, cap) = render(
            &[(
                "macros/wrap.sql",
                None,
                "{% macro my_ref(x) %}{{ return(ref(x)) }}{% endmacro %}{% macro union_all(names) %}{% for n in names %}select * from {{ my_ref(n) }}{% if not loop.last %} union all {% endif %}{% endfor %}{% endmacro %}",
            )],
            "{{ union_all(['a', 'b']) }}",
        );
        let names: Vec<String> = refs(&cap)
            .into_iter()
            .map(|t| match t {
                Target::Ref { name, .. } => name,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(names, ["a", "b"]);
    }

    #[test]
    fn adapter_dispatch_follows_the_search_order_and_adapter_inheritance() {
        let files = |texts: &[(&str, Option<&str>, &str)]| -> Vec<MacroFile> {
            texts
                .iter()
                .map(|(p, pkg, t)| MacroFile {
                    path: p.to_string(),
                    package: pkg.map(str::to_string),
                    text: t.to_string(),
                })
                .collect()
        };
        let macros = files(&[
            (
                "dbt_packages/utils/macros/x.sql",
                Some("utils"),
                "{% macro x() %}{{ return(adapter.dispatch('x', 'utils')()) }}{% endmacro %}{% macro default__x() %}utils-default{% endmacro %}{% macro postgres__x() %}utils-postgres{% endmacro %}",
            ),
            (
                "dbt_packages/shim/macros/x.sql",
                Some("shim"),
                "{% macro default__x() %}shim-default{% endmacro %}",
            ),
            (
                "macros/mine.sql",
                None,
                "{% macro default__x() %}mine{% endmacro %}",
            ),
        ]);
        let model = "{{ utils.x() }}";
        let render_with = |adapter: &str, dispatch: &[(&str, &[&str])]| -> String {
            let mut s = settings();
            s.adapter = adapter.into();
            s.dispatch = dispatch
                .iter()
                .map(|(ns, order)| {
                    (
                        ns.to_string(),
                        order.iter().map(|p| p.to_string()).collect(),
                    )
                })
                .collect();
            let (r, errors) = Renderer::new(s, &macros, [model]);
            assert!(errors.is_empty(), "{errors:?}");
            r.render("models/m.sql", model, this(), "m").0.unwrap()
        };
        // dbt: the root project, then the namespace; in each, the adapter's
        // prefixes. The root's default__ wins over the package's postgres__.
        assert_eq!(render_with("postgres", &[]), "mine");
        // A `dispatch:` search order replaces that.
        assert_eq!(
            render_with("postgres", &[("utils", &["shim", "utils"])]),
            "shim-default"
        );
        assert_eq!(
            render_with("postgres", &[("utils", &["utils"])]),
            "utils-postgres"
        );
        // Redshift inherits Postgres's implementations.
        assert_eq!(
            render_with("redshift", &[("utils", &["utils"])]),
            "utils-postgres"
        );
        assert_eq!(
            render_with("snowflake", &[("utils", &["utils"])]),
            "utils-default"
        );
        assert_eq!(
            render_with("snowflake", &[("utils", &["shop", "utils"])]),
            "mine"
        );
    }

    #[test]
    fn adapter_dispatch_resolves_to_default_implementation() {
        let (sql, _) = render(
            &[(
                "macros/d.sql",
                None,
                "{% macro cents(c) %}{{ return(adapter.dispatch('cents')(c)) }}{% endmacro %}{% macro default__cents(c) %}({{ c }} / 100){% endmacro %}",
            )],
            "select {{ cents('amount') }} from t",
        );
        assert_eq!(sql.unwrap(), "select (amount / 100) from t");
    }

    #[test]
    fn package_macros_answer_by_namespace() {
        let (sql, cap) = render(
            &[(
                "dbt_packages/utils/macros/u.sql",
                Some("utils"),
                "{% macro star(rel) %}a, b{% endmacro %}",
            )],
            "select {{ utils.star(ref('x')) }}, {{ missing_pkg.thing() }} from {{ ref('x') }}",
        );
        assert_eq!(
            sql.unwrap(),
            format!("select a, b, {PLACEHOLDER} from analytics.x")
        );
        assert!(lock(&cap.unknown).contains("missing_pkg.thing()"));
    }

    #[test]
    fn unknown_macros_render_as_placeholders_not_errors() {
        let (sql, cap) = render(
            &[],
            "select {{ some_macro('x') }} as c, {{ run_started_at.strftime('%Y') }} from {{ ref('a') }}",
        );
        let sql = sql.unwrap();
        assert!(sql.contains(PLACEHOLDER), "{sql}");
        assert!(lock(&cap.unknown).contains("some_macro"));
        assert_eq!(refs(&cap).len(), 1);
    }

    #[test]
    fn var_and_env_var_never_read_the_environment() {
        let (sql, _) = render(
            &[],
            "{{ var('start') }} {{ var('missing', 'd') }} {{ env_var('HOME', 'none') }} {{ env_var('PATH') }}|",
        );
        assert_eq!(sql.unwrap(), "2025-01-01 d none |");
    }

    #[test]
    fn runaway_templates_stop() {
        let (sql, _) = render(
            &[],
            "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}",
        );
        // The bound and what to look at, not the engine's "ran out of fuel".
        let err = sql.unwrap_err().message;
        assert!(
            err.contains("limit of 2000000 steps") && err.contains("runaway"),
            "{err}"
        );
        assert!(!err.contains("engine ran out"), "{err}");
        let (sql, _) = render(
            &[(
                "macros/r.sql",
                None,
                "{% macro r(n) %}{{ r(n) }}{% endmacro %}",
            )],
            "{{ r(1) }}",
        );
        assert!(sql.is_err());
        // Each call of a busy macro stays under its own fuel; together they
        // exhaust the model's.
        let (sql, _) = render(
            &[(
                "macros/busy.sql",
                None,
                "{% macro busy() %}{% for i in range(60000) %}{% endfor %}{% endmacro %}",
            )],
            "{% for i in range(20000) %}{{ busy() }}{% endfor %}select 1",
        );
        let err = sql.unwrap_err().message;
        assert!(err.contains("fuel") && err.contains("busy"), "{err}");
    }

    #[test]
    fn nested_macro_calls_share_the_models_fuel() {
        // Each level used most of its own fuel before and after calling the
        // next: counted only at each call's start, 64 levels ran about 120
        // million steps.
        let burn = "{% for i in range(100000) %}{% endfor %}{% for i in range(100000) %}{% endfor %}{% for i in range(100000) %}{% endfor %}";
        let (sql, _) = render(
            &[(
                "macros/deep.sql",
                None,
                &format!(
                    "{{% macro deep(n) %}}{burn}{{% if n > 0 %}}{{{{ deep(n - 1) }}}}{{% endif %}}{burn}{{% endmacro %}}"
                ),
            )],
            "{{ deep(60) }}",
        );
        let err = sql.unwrap_err().message;
        assert!(err.contains("ran out of fuel calling `deep`"), "{err}");
    }

    #[test]
    fn the_sql_a_run_keeps_is_bounded() {
        let files: Vec<MacroFile> = Vec::new();
        let model = "{{ 'x' * 1000000 }}";
        let (mut r, _) = Renderer::new(settings(), &files, [model]);
        r.run_limit = 3_500_000;
        let results: Vec<bool> = (0..5)
            .map(|_| r.render("models/m.sql", model, this(), "m").0.is_ok())
            .collect();
        assert_eq!(results, [true, true, true, false, false]);
        let err = r.render("models/m.sql", model, this(), "m").0.unwrap_err();
        assert!(err.message.contains("rendered SQL passed"), "{err:?}");
    }

    #[test]
    fn the_fuel_a_run_spends_is_bounded() {
        // 500 models each spinning near their own fuel once took 80 s: the
        // run's total stops them, the top-level loop and the macro calls
        // both counted.
        let files = vec![MacroFile {
            path: "macros/spin.sql".into(),
            package: None,
            text: "{% macro spin() %}{% for i in range(100000) %}{% endfor %}{% endmacro %}".into(),
        }];
        let model = "{% for i in range(100000) %}{% endfor %}{{ spin() }}select 1";
        let (mut r, _) = Renderer::new(settings(), &files, [model]);
        assert!(r.render("models/m.sql", model, this(), "m").0.is_ok());
        let one = r.fuel_spent.load(Ordering::Relaxed);
        // The loop alone is 100,000 steps or more; the macro's as many.
        assert!(one > 200_000, "{one}");
        r.run_fuel = one * 5 / 2;
        // Settled between batches only: all of a batch renders.
        let results: Vec<bool> = (0..4)
            .map(|_| r.render("models/m.sql", model, this(), "m").0.is_ok())
            .collect();
        assert_eq!(results, [true, true, true, true]);
        assert!(!r.spent_out());
        r.settle();
        assert!(r.spent_out());
        let results: Vec<bool> = (0..2)
            .map(|_| r.render("models/m.sql", model, this(), "m").0.is_ok())
            .collect();
        assert_eq!(results, [false, false]);
        let err = r.render("models/m.sql", model, this(), "m").0.unwrap_err();
        let allowed = format!("more than the {} steps of fuel a run allows", one * 5 / 2);
        assert!(err.message.contains(&allowed), "{err:?}");
    }

    #[test]
    fn an_error_in_a_macro_names_the_macro_file_and_its_line() {
        // The macro file's line was given as the model's: line 4 of a
        // two-line model.
        let macros = "-- helpers\n\n{% macro boom(x) %}\n  {{ x.y.z() }} {{ fail_here(1, 2) | int + 'a' }}\n{% endmacro %}\n";
        let (sql, _) = render(
            &[("macros/helpers.sql", None, macros)],
            "select 1\n{{ boom(none) }}",
        );
        let err = sql.unwrap_err();
        assert_eq!(err.line, 0, "{err:?}");
        assert!(
            err.message
                .starts_with("in macro `boom` (macros/helpers.sql line 4): "),
            "{err:?}"
        );
    }

    #[test]
    fn syntax_errors_say_where() {
        let (sql, _) = render(&[], "select 1\nfrom {{ ref('a') \n");
        let err = sql.unwrap_err();
        assert!(err.line >= 2, "{err:?}");
    }

    #[test]
    fn dbt_cross_database_macros_render_as_sql() {
        let (sql, cap) = render(
            &[],
            "select {{ dbt.date_trunc('week', 'order_date') }}, {{ dbt.dateadd(datepart='day', interval=-6, from_date_or_timestamp='d') }}, cast(x as {{ dbt.type_string() }}) from t",
        );
        assert_eq!(
            sql.unwrap(),
            "select date_trunc('week', order_date), dateadd(day, -6, d), cast(x as varchar) from t"
        );
        assert!(lock(&cap.unknown).is_empty());
    }

    #[test]
    fn config_values_render_their_jinja() {
        let vars = [("load".to_string(), serde_json::json!(true))].into();
        let r = ConfigRenderer::new(&vars, &crate::config::TargetConfig::default());
        assert_eq!(
            r.render(serde_json::json!("{{ var('load', false) }}")),
            serde_json::json!(true)
        );
        assert_eq!(
            r.render(serde_json::json!("{{ var('other', false) }}")),
            serde_json::json!(false)
        );
        assert_eq!(
            r.render(serde_json::json!("{{ target.schema }}_x")),
            serde_json::json!("analytics_x")
        );
        assert_eq!(
            r.render(serde_json::json!(["plain"])),
            serde_json::json!(["plain"])
        );
    }

    #[test]
    fn keyword_arguments_reach_macros() {
        let (sql, _) = render(
            &[(
                "dbt_packages/pk/macros/g.sql",
                Some("pk"),
                "{% macro g(a=None, n=None, d='day') %}[{{ n }}|{{ d }}]{% endmacro %}",
            )],
            "{{ pk.g(n=3, d='week') }} {{ g(n=4) }} {{ log('x', info=True) }}",
        );
        assert_eq!(sql.unwrap(), "[3|week] [4|day] ");
    }

    #[test]
    fn non_macro_blocks_are_stripped() {
        let text = "{% test not_null(model) %}x{% endtest %}{% macro a() %}1{% endmacro %}{% docs d %}doc{% enddocs %}";
        assert_eq!(
            strip_non_macro_blocks(text),
            "{% macro a() %}1{% endmacro %}"
        );
        // An unclosed block is not a macro; text between blocks is no part
        // of any (dbt never compiles it).
        let names: Vec<String> =
            macro_blocks("{%- macro a(x) -%}{% endmacro %}{% ### %}{% macro b() %}")
                .into_iter()
                .map(|b| b.name)
                .collect();
        assert_eq!(names, ["a"]);
        assert_eq!(
            rename_definitions("{%- macro a(x) -%}{{ a(1) }}{% endmacro %}"),
            "{%- macro __ripple_def_a(x) -%}{{ a(1) }}{% endmacro %}"
        );
    }
}
