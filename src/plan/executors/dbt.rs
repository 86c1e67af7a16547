//! dbt: `dbt build` of the model (and its own tests), built as its shadow
//! through an overlay.
//!
//! The overlay (docs/plan.md, *dbt*) is a folder ripple's plan makes at run
//! time, outside the user's project: the project's entries linked in, its
//! `dbt_project.yml` with one more macro folder, and in that folder the
//! three macros dbt names relations with. They give every restated model
//! its shadow's parts, from a table the overlay's macro file holds, and
//! leave the rest to the project's own macros (renamed in the overlay when
//! the project defines them) or dbt's. `dbt build --project-dir
//! $RIPPLE_DBT_OVERLAY` builds the selected model as its shadow, and each
//! `ref()` to a restated model reads its shadow, whatever the shadow
//! pattern; refs to the rest read production. The table is written once,
//! in the overlay, not in each command: a command naming every shadow made
//! a plan's size grow with the square of its models (and one argument past
//! the kernel's 128 KiB cannot be run at all).

use std::fmt::Write as _;

use super::{Commands, DbtShadows, ShellLine, TaskContext};
use crate::project::DbtRoot;
use crate::time::{Hour, datetime_of};

/// The variable the overlay folder is in when dbt commands run.
pub const OVERLAY_VAR: &str = "RIPPLE_DBT_OVERLAY";

/// The overlay's own macro folder.
const OVERLAY_MACROS: &str = "ripple_overlay_macros";

/// Prefix of a project's own naming macro, renamed in the overlay.
const USER_PREFIX: &str = "ripple_user__";

/// Fills the dbt command of a task.
pub(super) fn commands(c: &mut Commands, cx: &TaskContext) {
    if !cx.dbt_overlay {
        return;
    }
    let d = cx.dataset;
    let microbatch = d
        .config
        .get("incremental_strategy")
        .and_then(|v| v.as_str())
        == Some("microbatch");
    if refusal(d, cx.dbt_shadows).is_some() {
        return;
    }
    let Ok(select) = selector(d) else { return };
    // ripple.yml's `vars`: what production passes with `--vars`.
    let vars: serde_json::Map<String, serde_json::Value> = cx
        .dbt_vars
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    // `build`: the model, then its own tests on its shadow (cautious: only
    // tests of this model alone, so none reads a shadow not yet built); a
    // failing test stops the plan before any swap.
    let command = ShellLine::new("dbt")
        .arg("build")
        .arg("--indirect-selection")
        .arg("cautious")
        .arg("--project-dir")
        .var(OVERLAY_VAR, "")
        .arg("--target-path")
        .var(OVERLAY_VAR, "/target")
        .arg("--log-path")
        .var(OVERLAY_VAR, "/logs")
        // Else dbt writes `.user.yml` into the profiles folder, which may
        // be the user's project.
        .arg("--no-send-anonymous-usage-stats")
        // The target ripple planned for (`target.name` in ripple.yml): the
        // profile's default may be a developer's, whose schemas dbt would
        // then read and write instead.
        .arg("--target")
        .arg(cx.dbt_target)
        .arg("--select")
        .arg(&select);
    let command = if vars.is_empty() {
        command
    } else {
        command
            .arg("--vars")
            .arg(&yaml_safe_json(&serde_json::Value::Object(vars)))
    };
    c.dbt = Some(if cx.task.full || !microbatch {
        // Anything but a microbatch model recomputes all it holds: built
        // from scratch into its shadow, whatever its incremental filter
        // (`> max(x) from {{ this }}` would find the shadow's copy of
        // production up to date and restate nothing).
        command.arg("--full-refresh")
    } else {
        let (start, end) = cx.task.span;
        command
            .arg("--event-time-start")
            .arg(&instant(start))
            .arg("--event-time-end")
            .arg(&instant(end))
    });
}

/// `value` as JSON that dbt, which reads `--vars` as YAML, reads back
/// unchanged: YAML folds a raw NEL (U+0085) into a space and refuses the
/// other C1 controls, so those and the line and paragraph separators are
/// written as `\u` escapes (which JSON and YAML read alike). An alias
/// holding a NEL once made dbt build a shadow the plan never names.
fn yaml_safe_json(value: &serde_json::Value) -> String {
    let text = value.to_string();
    let breaks = |c: char| {
        matches!(
            c,
            '\u{80}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}'
        )
    };
    if !text.contains(breaks) {
        return text;
    }
    // Such characters are only ever inside JSON strings: escaped in place.
    text.chars()
        .map(|c| match breaks(c) {
            true => format!("\\u{:04x}", c as u32),
            false => c.to_string(),
        })
        .collect()
}

/// The overlay's three naming macros: a restated model (of `shadows`) gets
/// its shadow's parts; anything else what the project's own macro (`user`:
/// renamed in the overlay) or dbt's gives.
fn naming_macros(
    user: &[&str],
    shadows: &DbtShadows,
    sources: &DbtShadows,
    mask_statement: bool,
) -> String {
    // The table is built once per node dbt renders (its context is shared
    // by the three macros), not once per call.
    let mut out = format!(
        "{{# Written by ripple for a backfill: names restated models' shadows. #}}\n\
         {{% macro ripple_overlay__shadows() -%}}\n\
         {{%- do return({}) -%}}\n\
         {{%- endmacro %}}\n\n\
         {{% macro ripple_overlay__shadow(node) -%}}\n\
         {{%- if node is none or node.resource_type != 'model' or node.package_name != project_name -%}}\n\
         {{%- do return(none) -%}}\n\
         {{%- endif -%}}\n\
         {{%- if context.get('ripple_overlay__table') is none -%}}\n\
         {{%- do context.update({{'ripple_overlay__table': ripple_overlay__shadows()}}) -%}}\n\
         {{%- endif -%}}\n\
         {{%- do return(context['ripple_overlay__table'].get(node.name)) -%}}\n\
         {{%- endmacro %}}\n",
        jinja_literal(&serde_json::json!(shadows))
    );
    // A source whose table the plan restates reads its shadow: dbt lets
    // the root project mask `source` (`builtins` keeps dbt's own, or the
    // project's, renamed).
    if !sources.is_empty() || user.contains(&"source") {
        let base = if user.contains(&"source") {
            format!("{USER_PREFIX}source(source_name, table_name)")
        } else {
            "builtins.source(source_name, table_name)".to_string()
        };
        let _ = write!(
            out,
            "\n{{# Sources whose tables the backfill restates read their shadows. #}}\n\
             {{% macro ripple_overlay__sources() -%}}\n\
             {{%- do return({}) -%}}\n\
             {{%- endmacro %}}\n\n\
             {{% macro source(source_name, table_name) -%}}\n\
             {{%- set relation = {base} -%}}\n\
             {{%- set shadow = ripple_overlay__sources().get(source_name ~ '.' ~ table_name) -%}}\n\
             {{%- if shadow is none -%}}\n\
             {{%- do return(relation) -%}}\n\
             {{%- endif -%}}\n\
             {{%- do return(relation.incorporate(path=shadow)) -%}}\n\
             {{%- endmacro %}}\n",
            jinja_literal(&serde_json::json!(sources))
        );
    }
    out.push_str(&read_only_macros(user, mask_statement));
    out.push_str(
        "\n{# Hooks (models' pre- and post-hooks, on-run-start and on-run-end) do not run\n   in a backfill: they would run against production. #}\n{% macro run_hooks(hooks, inside_transaction=True) %}{% endmacro %}\n\n{# Tests run on the shadows store no failures: they would be stored in\n   production's audit schema. #}\n{% macro should_store_failures() %}{% do return(false) %}{% endmacro %}\n",
    );
    for (name, part, arg) in [
        ("generate_database_name", "database", "custom_database_name"),
        ("generate_schema_name", "schema", "custom_schema_name"),
        ("generate_alias_name", "identifier", "custom_alias_name"),
    ] {
        let fallback = if user.contains(&name) {
            format!("{USER_PREFIX}{name}({arg}, node)")
        } else {
            format!("adapter.dispatch('{name}', 'dbt')({arg}, node)")
        };
        let _ = write!(
            out,
            "\n{{% macro {name}({arg}=none, node=none) -%}}\n\
             {{%- set shadow = ripple_overlay__shadow(node) -%}}\n\
             {{%- if shadow is not none and shadow.get('{part}') -%}}\n\
             {{%- do return(shadow['{part}']) -%}}\n\
             {{%- endif -%}}\n\
             {{%- do return({fallback}) -%}}\n\
             {{%- endmacro %}}\n"
        );
    }
    out
}

/// `run_query` and `statement` as the overlay defines them: while dbt
/// compiles a model's body (before its materialization runs, when
/// `compiled_code` is still none), what they are given must read, or the
/// task stops before it runs: an audit insert in a model's body would
/// otherwise reach production during the backfill. The materialization's
/// own statements (writing the shadow) pass as they are. Then dbt's own
/// (`dbt.`), or the project's, renamed.
fn read_only_macros(user: &[&str], mask_statement: bool) -> String {
    let base = |name: &str| match user.contains(&name) {
        true => format!("{USER_PREFIX}{name}"),
        false => format!("dbt.{name}"),
    };
    // A write hides in a select only as a writing CTE, `select into`, a
    // lock, a second statement, or a function that writes. Comments,
    // strings and dollar quotes are blanked first.
    let families = crate::sql::rewrite::WRITING_PREFIXES.map(|p| format!("{p}[a-z0-9_]*"));
    let functions = std::iter::once("nextval")
        .chain(crate::sql::rewrite::WRITING_FUNCTIONS)
        .chain(families.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join("|");
    // Written for Jinja2's strings, which read `\\` as one backslash (and
    // `\b` as a backspace): `\\1` reaches the pattern as `\1`.
    let blank = r#"(?s)--[^\n]*|/[*].*?[*]/|'(?:[^']|'')*'|[$]([a-z_0-9]*)[$].*?[$]\\1[$]"#;
    let reads =
        r#"[ \t\r\n(]*(select|with|values|show|describe|from|table|summarize)(?![a-z0-9_])"#;
    let writes = format!(
        r#"(?<![a-z0-9_])(insert|update|delete|merge|into|copy|{functions})(?![a-z0-9_])|;[ \t\r\n]*[^ \t\r\n]"#
    );
    format!(
        r#"
{{# A model's body writes nothing in a backfill: while dbt compiles it, what it runs
   through run_query or a statement block must read (a write would reach production). #}}
{{% macro ripple_overlay__read_only(sql, via) -%}}
{{%- if execute and compiled_code is none -%}}
{{%- set text = modules.re.sub("{blank}", ' ', sql | string | lower) -%}}
{{%- if modules.re.match("{reads}", text) is none or modules.re.search("{writes}", text) is not none -%}}
{{%- do exceptions.raise_compiler_error('ripple: ' ~ via ~ ' in the body of ' ~ (model.name if model is defined else 'a node') ~ ' runs SQL that may write, which would reach production during the backfill: ' ~ (sql | string | trim)[:200] ~ ' -- nothing was run. Move it to a post_hook or an on-run-end hook (the backfill runs neither), or make it a read') -%}}
{{%- endif -%}}
{{%- endif -%}}
{{%- endmacro %}}

{{% macro run_query(sql) -%}}
{{%- do ripple_overlay__read_only(sql, 'run_query') -%}}
{{%- do return({run_query}(sql)) -%}}
{{%- endmacro %}}
{statement}"#,
        run_query = base("run_query"),
        statement = if mask_statement {
            format!(
                r#"
{{% macro statement(name=None, fetch_result=False, auto_begin=True, language='sql') -%}}
{{%- set body = caller() -%}}
{{%- do ripple_overlay__read_only(body, 'a statement block') -%}}
{{%- call {}(name, fetch_result, auto_begin, language) -%}}{{{{ body }}}}{{%- endcall -%}}
{{%- endmacro %}}
"#,
                base("statement")
            )
        } else {
            String::new()
        },
    )
}

/// `value` as a Jinja literal that Jinja2 reads back unchanged: JSON's
/// shape, every string printable ASCII (`\\u`/`\\U` escapes, which Jinja2
/// decodes, for the rest: a name never becomes template syntax or a raw
/// line break).
fn jinja_literal(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", jinja_string(k), jinja_literal(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        serde_json::Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(jinja_literal)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        serde_json::Value::String(s) => jinja_string(s),
        serde_json::Value::Null => "none".to_string(),
        other => other.to_string(),
    }
}

fn jinja_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            c if (c as u32) <= 0xffff => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push('"');
    out
}

/// `text` with its definitions of dbt's naming macros renamed (the tag's
/// name only), so the overlay's own can call them.
fn rename_naming_macros(text: &str, masked: &[&'static str]) -> (String, Vec<&'static str>) {
    let mut out = String::with_capacity(text.len() + 64);
    let mut renamed = Vec::new();
    let mut at = 0;
    for block in crate::ingest::dbt_macro_blocks(text) {
        let Some(&name) = masked.iter().find(|n| **n == block.name) else {
            continue;
        };
        let tag = &text[block.start..block.body_start];
        let Some(offset) = tag.find(name) else {
            continue;
        };
        out.push_str(&text[at..block.start + offset]);
        out.push_str(USER_PREFIX);
        out.push_str(name);
        at = block.start + offset + name.len();
        renamed.push(name);
    }
    out.push_str(&text[at..]);
    (out, renamed)
}

/// The lines that build the overlay of `root` in `$RIPPLE_DBT_OVERLAY` (an
/// empty folder) from the dbt project in `${RIPPLE_DBT_PROJECT:-.}`, using
/// the functions of [`OVERLAY_FUNCTIONS`]; an error saying why a project
/// cannot be run so.
pub fn overlay_lines(
    root: &DbtRoot,
    shadows: &DbtShadows,
    sources: &DbtShadows,
    python: bool,
) -> Result<(Vec<ShellLine>, Vec<String>), String> {
    // dbt runs a Python model only from its own `statement` called by the
    // materialization itself: a plan restating one cannot mask `statement`.
    let masked: Vec<&'static str> = crate::ingest::DBT_NAME_MACROS
        .into_iter()
        .filter(|n| !(python && *n == "statement"))
        .collect();
    if let Some(why) = unusual_top_level_key(&root.project_file) {
        return Err(why);
    }
    let (project_file, dropped) = overlay_project_file(&root.project_file, &root.macro_paths);
    let warnings = dropped
        .iter()
        .map(|key| format!(
            "dbt_project.yml's `{key}` hooks do not run in the backfill: they would run against production. Run what the models need of them (a function, a grant) yourself first"
        ))
        .collect();
    let mut files: Vec<(String, String)> = Vec::new();
    let mut mirrored: Vec<String> = Vec::new();
    let mut user: Vec<&'static str> = Vec::new();
    for (path, text) in &root.name_macros {
        let top = path.split('/').next().unwrap_or_default();
        if path.starts_with('/') || top == ".." || top.is_empty() || !path.contains('/') {
            return Err(format!(
                "its macro file `{path}` is outside the project's folders: ripple cannot wrap the relation names it defines"
            ));
        }
        let (renamed, names) = rename_naming_macros(text, &masked);
        user.extend(names);
        if !mirrored.iter().any(|m| m == top) {
            mirrored.push(top.to_string());
        }
        files.push((path.clone(), renamed));
    }
    user.sort_unstable();
    user.dedup();
    files.push((
        format!("{OVERLAY_MACROS}/ripple_overlay.sql"),
        naming_macros(&user, shadows, sources, !python),
    ));
    files.push(("dbt_project.yml".to_string(), project_file));
    let mut lines = vec![
        mirrored
            .iter()
            .fold(ShellLine::new("ripple_overlay_link"), |l, m| l.arg(m)),
    ];
    for (path, text) in files {
        lines.push(ShellLine::new("ripple_overlay_write").arg(&path).arg(&text));
    }
    Ok((lines, warnings))
}

/// A top-level key of `dbt_project.yml` written in a form the overlay's
/// text edit does not read (`? on-run-start`, a merge key `<<`, a tag, an
/// anchor, an escaped quoted key, a flow mapping): hooks spelt so would
/// survive into the overlay and run against production.
fn unusual_top_level_key(text: &str) -> Option<String> {
    for (i, line) in text.lines().enumerate() {
        let first = line.chars().next();
        let quoted_escape = matches!(first, Some('"'))
            && line
                .split_once("\":")
                .or_else(|| line.split_once("\" :"))
                .is_some_and(|(key, _)| key.contains('\\'));
        let odd = matches!(first, Some('?' | '<' | '{' | '[' | '!' | '&' | '*' | '%'))
            && !line.starts_with("%YAML");
        if odd || quoted_escape {
            return Some(format!(
                "dbt_project.yml:{}: a top-level key is written in a form ripple does not edit (`{}`): write its keys plainly (`key: value`), so that hooks can be left out of the backfill",
                i + 1,
                crate::text::one_line(line.chars().take(40).collect::<String>().as_str())
            ));
        }
    }
    None
}

/// The keys of `dbt_project.yml` the overlay takes out: hooks that run on
/// every `dbt run` against production, and the macro folders it replaces.
const DROPPED_KEYS: [&str; 3] = ["on-run-start", "on-run-end", "macro-paths"];

/// `dbt_project.yml` for the overlay: the project's own text without its
/// top-level [`DROPPED_KEYS`], then `macro-paths` naming the project's
/// folders and the overlay's; and the hooks it took out. Edited as text,
/// not parsed and written again: dbt reads YAML 1.1 (`yes`, `on` are
/// booleans to it), and its own reading must stay what it was.
fn overlay_project_file(text: &str, macro_paths: &[String]) -> (String, Vec<&'static str>) {
    let mut out = String::with_capacity(text.len() + 64);
    let mut dropped = Vec::new();
    let mut skipping = false;
    for line in text.split_inclusive('\n') {
        let top = !line.starts_with([' ', '\t', '-', '#', '\r', '\n']);
        if top {
            let key = line
                .split(':')
                .next()
                .unwrap_or_default()
                .trim()
                .trim_matches(['"', '\'']);
            skipping = match DROPPED_KEYS.iter().find(|k| **k == key) {
                Some(k) => {
                    if *k != "macro-paths" {
                        dropped.push(*k);
                    }
                    true
                }
                None => false,
            };
        }
        if !skipping {
            out.push_str(line);
        }
    }
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    let mut paths: Vec<&str> = macro_paths.iter().map(String::as_str).collect();
    paths.push(OVERLAY_MACROS);
    let _ = writeln!(
        out,
        "# Added by ripple's overlay: the project's macro folders and its own.\nmacro-paths: {}",
        serde_json::to_string(&paths).unwrap_or_default()
    );
    (out, dropped)
}

/// The shell functions the overlay lines call: `ripple_overlay_link
/// FOLDER...` links every entry of the project into the overlay but its
/// project file and dbt's outputs, and the `FOLDER`s file by file;
/// `ripple_overlay_write PATH TEXT` writes one file of the overlay.
pub const OVERLAY_FUNCTIONS: &str = r#"ripple_overlay_link() {
  local project entry name skip f
  project=$(cd "${RIPPLE_DBT_PROJECT:-.}" && pwd -P)
  for entry in "$project"/* "$project"/.[!.]* "$project"/..?*; do
    if [ ! -e "$entry" ] && [ ! -L "$entry" ]; then continue; fi
    name=${entry##*/}
    case $name in dbt_project.yml|target|logs|ripple_overlay_macros) continue ;; esac
    skip=
    for f in "$@"; do if [ "$name" = "$f" ]; then skip=1; fi; done
    if [ -z "$skip" ]; then ln -s "$entry" "$RIPPLE_DBT_OVERLAY/$name"; fi
  done
  for f in "$@"; do
    mkdir -p "$RIPPLE_DBT_OVERLAY/$f"
    while IFS= read -r -d '' entry; do
      entry=${entry#./}
      if [ -d "$project/$f/$entry" ] && [ ! -L "$project/$f/$entry" ]; then
        mkdir -p "$RIPPLE_DBT_OVERLAY/$f/$entry"
      else
        ln -s "$project/$f/$entry" "$RIPPLE_DBT_OVERLAY/$f/$entry"
      fi
    done < <(cd "$project/$f" && find . -mindepth 1 -print0)
  done
}
ripple_overlay_write() {
  local dir=$RIPPLE_DBT_OVERLAY rest=$1
  while [ "${rest#*/}" != "$rest" ]; do
    dir=$dir/${rest%%/*}; rest=${rest#*/}
    if [ -L "$dir" ]; then
      echo "ripple: the overlay's $1 would be written through a link ($dir): nothing was written" >&2
      return 1
    fi
    mkdir -p "$dir" || return 1
  done
  rm -f "$dir/$rest"
  printf '%s\n' "$2" > "$dir/$rest"
}
"#;

/// Why the dbt executor cannot rebuild `d` into its shadow, if it cannot:
/// no selector names it alone, or its shadow is in another database (dbt
/// on PostgreSQL refuses references across databases, and on DuckDB the
/// other database would have to be attached in the profile).
pub fn refusal(d: &crate::project::Dataset, shadows: &super::DbtShadows) -> Option<String> {
    if let Err(why) = selector(d) {
        return Some(why);
    }
    // dbt's adapters write relation names into string literals unescaped
    // (catalog queries, `rename`): such a task fails half-way through dbt's
    // own steps; refused before the plan starts instead.
    if d.relation.contains('\'') || d.name.contains('\'') {
        return Some(format!(
            "`{}`: its name holds `'`, which dbt's adapters write unescaped into their own SQL, so dbt cannot rebuild it; rename the model (or set its `alias`), or restate it yourself",
            crate::text::one_line(&d.name)
        ));
    }
    never_run_whole(d, shadows)
}

/// Why the overlay cannot keep `d`'s body (its `job`) from writing
/// production during its task, or why its rebuild would not be its
/// history, if either; `statement_masked`: whether the overlay masks
/// `statement` in this plan.
pub fn body_refusal(
    d: &crate::project::Dataset,
    job: Option<&crate::project::Job>,
    statement_masked: bool,
    dialect: crate::sql::SqlDialect,
) -> Option<String> {
    // What the overlay's masks cannot check: calls that write while dbt
    // compiles the body (before its materialization), during the task.
    let unchecked = |call: &str| {
        let name = call.split('`').nth(1).unwrap_or(call);
        let last = name.rsplit('.').next().unwrap_or(name);
        let adapter_write =
            name.starts_with("adapter.") && crate::ingest::DBT_ADAPTER_WRITES.contains(&last);
        adapter_write || name == "dbt.statement" || (!statement_masked && last == "statement")
    };
    if let Some(call) = job.and_then(|j| j.needs_warehouse.iter().find(|c| unchecked(c))) {
        return Some(format!(
            "`{}`'s body calls {call}, which can change the warehouse (production) while dbt compiles the model, during the task, where the overlay cannot check it; move it to a post_hook or an on-run-end hook (the backfill runs neither), or restate the model by hand",
            d.name
        ));
    }
    // `sql_header` runs before the model's own statement, unchecked: only
    // session settings and temporary functions may be in it.
    if let Some(header) = d.config.get("sql_header").and_then(|v| v.as_str())
        && let Some(bad) = header
            .split(';')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .find(|s| !header_statement_is_session(s))
    {
        return Some(format!(
            "`{}`'s `sql_header` runs `{}` before the model, during the task, where the overlay cannot check it; a header may only set the session or make temporary functions: move the rest to an on-run-start hook run before the backfill",
            d.name,
            crate::text::one_line(bad)
        ));
    }
    slice_refusal(d, job, dialect)
}

/// Why what `--full-refresh` builds of an incremental model is not its
/// history, if it is not: a filter outside `is_incremental()` bounding a
/// time by the clock or by another table (`where order_date >=
/// current_date - 7`) keeps only a recent slice in a rebuild, while the
/// incremental runs kept everything they ever added.
fn slice_refusal(
    d: &crate::project::Dataset,
    job: Option<&crate::project::Job>,
    dialect: crate::sql::SqlDialect,
) -> Option<String> {
    let incremental = d.config.get("materialized").and_then(|v| v.as_str()) == Some("incremental");
    let microbatch = d
        .config
        .get("incremental_strategy")
        .and_then(|v| v.as_str())
        == Some("microbatch");
    if !incremental || microbatch {
        return None;
    }
    let sql = job?.sql.as_ref()?;
    let b = crate::sql::moving_bound(sql, dialect, &d.relation)?;
    let follows = match &b.follows {
        None => "the clock".to_string(),
        Some(t) => format!("the data in `{t}`"),
    };
    Some(format!(
        "`{}` is incremental and keeps what every run added, but what `--full-refresh` rebuilds into its shadow holds only the rows where `{}`, a bound that moves with {follows}: every restated partition outside it would come out empty and the swap would delete it from production; put that filter inside `{{% if is_incremental() %}}`, make the model `microbatch`, or restate it yourself",
        d.name,
        crate::text::one_line(&b.filter)
    ))
}

/// Why `d` cannot be rebuilt into its shadow at all, if it cannot.
fn never_run_whole(d: &crate::project::Dataset, shadows: &super::DbtShadows) -> Option<String> {
    // dbt ignores `--full-refresh` for such a model: its shadow would stay
    // the copy of production the setup made, pass every check, and be
    // swapped back unchanged.
    // `None`: a value ripple could not evaluate (computed from what its
    // Jinja does not have), which may be false to dbt.
    let never_full = match d.config.get("full_refresh") {
        None | Some(serde_json::Value::Null) => Some(false),
        Some(serde_json::Value::Bool(b)) => Some(!b),
        Some(serde_json::Value::String(s)) if s.eq_ignore_ascii_case("false") => Some(true),
        Some(serde_json::Value::String(s)) if s.eq_ignore_ascii_case("true") => Some(false),
        Some(_) => None,
    };
    let microbatch = d
        .config
        .get("incremental_strategy")
        .and_then(|v| v.as_str())
        == Some("microbatch");
    // Only an incremental model keeps its rows without a full refresh.
    let incremental = d.config.get("materialized").and_then(|v| v.as_str()) == Some("incremental");
    if never_full.is_none() && incremental && !microbatch {
        return Some(format!(
            "`{}`'s `full_refresh` config is computed from something ripple's Jinja does not have (see `ripple check`), so ripple cannot tell whether dbt would ignore `--full-refresh` and swap the old rows back; write it as `true`, `false` or a `var(...)` for the backfill, or restate the model yourself",
            d.name
        ));
    }
    if never_full == Some(true) && incremental && !microbatch {
        return Some(format!(
            "`{}` is configured `full_refresh: false`, so dbt would not rebuild it into its shadow (it ignores `--full-refresh`) and the old rows would be swapped back; set `full_refresh: true` for the backfill (dbt_project.yml or the model's config), or restate it yourself",
            d.name
        ));
    }
    let database = shadows.get(&d.name)?.get("database")?;
    let parts = crate::sql::rewrite::relation_parts(&d.relation);
    let production = parts.len().checked_sub(3).map(|i| parts[i].as_str());
    (production != Some(database.as_str())).then(|| {
        format!(
            "`{}`: its shadow would be in another database (`{database}`), which dbt cannot write beside production's; set `backfill.shadow` to a pattern in the same database (e.g. `backfill.{{table}}` or `{{schema}}.{{table}}__backfill`)",
            d.name
        )
    })
}

/// Whether a statement of a model's `sql_header` only sets the session or
/// makes a temporary function or macro (what headers are for).
fn header_statement_is_session(statement: &str) -> bool {
    let words: Vec<String> = statement
        .split_whitespace()
        .take(6)
        .map(str::to_ascii_lowercase)
        .collect();
    let w: Vec<&str> = words.iter().map(String::as_str).collect();
    matches!(
        w.as_slice(),
        ["set", ..]
            | ["reset", ..]
            | ["pragma", ..]
            | ["create", "temp" | "temporary", "function" | "macro", ..]
            | [
                "create",
                "or",
                "replace",
                "temp" | "temporary",
                "function" | "macro",
                ..
            ]
    )
}

/// The `--select` value that addresses exactly the model `d`: its file
/// (`path:models/orders.sql`). A bare name is dbt selector syntax: in
/// `prod_critical+` the `+` selects production's model and its children,
/// and a name that is also a package's name selects the whole package.
/// A file path is read as one path unless it holds what dbt splits or
/// globs on (spaces, `,`, `*`, `?`, `[`, `]`); such a model, or one of a
/// package (whose path dbt does not read from the project's root), gets
/// no command, and the reason says why.
pub fn selector(d: &crate::project::Dataset) -> Result<String, String> {
    let Some(file) = d.file.as_deref().filter(|_| d.package.is_none()) else {
        return Err(format!(
            "`{}` comes from a dbt package: ripple writes no dbt command for it, since no selector names it alone (run it yourself as `{}`)",
            d.name,
            d.package
                .as_deref()
                .map_or(d.name.clone(), |p| format!("fqn:{p}.*.{}", d.name))
        ));
    };
    let unsafe_char = |c: char| c.is_whitespace() || c.is_control() || ",*?[]\\".contains(c);
    if let Some(c) = file.chars().find(|c| unsafe_char(*c)) {
        return Err(format!(
            "`{}`: its file `{}` holds {}, which dbt's selectors split or match on (as white space, control characters, `,`, `*`, `?`, `[`, `]` and `\\`): ripple writes no dbt command that could select other models; rename the file, or run the model yourself",
            d.name,
            crate::text::one_line(file),
            match c {
                ' ' => "a space".to_string(),
                ',' | '*' | '?' | '[' | ']' | '\\' => format!("`{c}`"),
                _ => format!("the character U+{:04X}", c as u32),
            }
        ));
    }
    if !file.ends_with(".sql") && !file.ends_with(".py") {
        return Err(format!(
            "`{}`: its file `{}` is not a `.sql` or `.py` file, which is all dbt's `path:` selector names alone: ripple writes no dbt command for it; run the model yourself",
            d.name,
            crate::text::one_line(file)
        ));
    }
    Ok(format!("path:{file}"))
}

/// An hour as dbt's event-time flags take it: a date at midnight, else a
/// timestamp.
fn instant(h: Hour) -> String {
    let (date, hour) = datetime_of(h);
    if hour == 0 {
        date.to_string()
    } else {
        format!("{date}T{hour:02}:00:00")
    }
}

/// Whether dbt builds `materialized` as a table that holds rows (views and
/// ephemeral models are computed when read: nothing to copy or swap).
pub fn holds_rows(materialized: Option<&str>) -> bool {
    !matches!(materialized, None | Some("view") | Some("ephemeral"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_project_file_keeps_its_text_without_hooks_and_macro_paths() {
        let text = "name: shop\nmacro-paths:\n  - macros\n  - more\n\"on-run-start\":\n- \"create function f()\"\nmodels:\n  shop:\n    +enabled: yes\non-run-end: \"grant all\"\nvars: {macro-paths: 1}";
        let (out, dropped) = overlay_project_file(text, &["macros".into(), "more".into()]);
        assert_eq!(dropped, ["on-run-start", "on-run-end"]);
        assert_eq!(
            out,
            "name: shop\nmodels:\n  shop:\n    +enabled: yes\nvars: {macro-paths: 1}\n# Added by ripple's overlay: the project's macro folders and its own.\nmacro-paths: [\"macros\",\"more\",\"ripple_overlay_macros\"]\n"
        );
    }

    #[test]
    fn only_the_naming_macros_tags_are_renamed() {
        let text = "{% macro generate_schema_name(custom_schema_name, node) -%}{{ generate_schema_name_for_env(custom_schema_name, node) }}{%- endmacro %}\n{% macro other() %}generate_alias_name{% endmacro %}\n{%- macro   generate_alias_name(a, node) %}x{% endmacro %}";
        let (renamed, names) = rename_naming_macros(text, &crate::ingest::DBT_NAME_MACROS);
        assert_eq!(names, ["generate_schema_name", "generate_alias_name"]);
        assert_eq!(
            renamed,
            "{% macro ripple_user__generate_schema_name(custom_schema_name, node) -%}{{ generate_schema_name_for_env(custom_schema_name, node) }}{%- endmacro %}\n{% macro other() %}generate_alias_name{% endmacro %}\n{%- macro   ripple_user__generate_alias_name(a, node) %}x{% endmacro %}"
        );
    }

    #[test]
    fn a_file_dbt_would_split_is_refused_naming_what_is_in_the_way() {
        let model = |file: &str| {
            let mut d = crate::project::Dataset::new(
                "model.m".into(),
                crate::project::DatasetKind::Model,
                "m".into(),
                "main.m".into(),
            );
            d.file = Some(file.into());
            selector(&d)
        };
        assert_eq!(model("models/a-b+c.sql").unwrap(), "path:models/a-b+c.sql");
        for (file, said) in [
            ("models/a b.sql", "holds a space"),
            ("models/a\\b.sql", "holds `\\`"),
            ("models/a\u{7f}b.sql", "holds the character U+007F"),
            ("models/a\u{2028}b.sql", "holds the character U+2028"),
            ("models/a.txt", "is not a `.sql` or `.py` file"),
        ] {
            let why = model(file).unwrap_err();
            assert!(why.contains(said), "{file:?}: {why}");
            assert!(
                !why.contains('\u{7f}') && !why.contains('\u{2028}'),
                "{why}"
            );
        }
    }

    #[test]
    fn event_times_are_dates_or_timestamps() {
        let day = crate::time::TimeKey::parse("2026-02-01").unwrap().start;
        assert_eq!(instant(day), "2026-02-01");
        assert_eq!(instant(day + 5), "2026-02-01T05:00:00");
    }
}
