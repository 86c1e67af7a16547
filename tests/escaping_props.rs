//! Hostile names through every output language, property-tested: a table
//! whose quoted name holds shell syntax, quotes, backslashes, newlines and
//! dots is planned, and each rendering is used the way its reader would:
//! the shell script runs under a fake SQL client, the Airflow DAG is parsed
//! by Python, DOT by graphviz-rust, JSON by serde. Whatever the name, a
//! plan is either refused with a message or its outputs carry the name as
//! data only: no command runs, no code appears, every statement names the
//! table exactly as SQL quotes it.

use std::path::Path;
use std::process::Command;

use proptest::prelude::*;

/// Pieces of hostile names: each would run a command or end a string, a
/// comment or an identifier if it were pasted unescaped.
const PIECES: &[&str] = &[
    "$(touch canary)",
    "`touch canary`",
    "\ntouch canary\n",
    "'; touch canary; '",
    "\" ; touch canary ; \"",
    "\\",
    "\\'",
    "#",
    " ",
    "&& touch canary",
    "| touch canary",
    "> canary",
    "!",
    "*",
    "%s",
    ".",
    "é",
    "\r",
    "\"\"\"",
    "'''",
    "\t",
    "\u{1b}]0;owned\u{7}\u{1b}[2J",
    "\u{202e}",
];

/// Whether `bytes` hold a character that acts on a terminal or reorders
/// text (an escape, a bell, a direction override).
fn acts(bytes: &[u8]) -> bool {
    String::from_utf8_lossy(bytes).chars().any(
        |c| matches!(c, '\u{1b}' | '\u{7}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'),
    )
}

fn hostile_name() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 1..5)
        .prop_map(|pieces| format!("t{}", pieces.concat()))
}

/// A plain SQL project whose one job rebuilds `mart."<name>"` from
/// `raw.orders`.
fn project(dir: &Path, name: &str) {
    let quoted = format!("mart.\"{}\"", name.replace('"', "\"\""));
    std::fs::create_dir_all(dir.join("jobs")).unwrap();
    std::fs::write(
        dir.join("ripple.yml"),
        "dialect: postgres\nmodels: [jobs]\ndatasets:\n  raw.orders: { grain: day, start: 2026-01-01 }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("jobs/a.sql"),
        format!(
            "drop table if exists {quoted};\ncreate table {quoted} as select order_id, cast(ordered_at as date) as order_date from raw.orders;\n"
        ),
    )
    .unwrap();
}

fn plan(dir: &Path, format: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ripple"))
        .args([
            "plan",
            "raw.orders",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-11",
        ])
        .args(["--as-of", "2026-02-01", "--format", format, "--project"])
        .arg(dir)
        .output()
        .unwrap()
}

/// The fake SQL client: records each script it is given, answers `t` (so
/// every validation passes and the whole script runs, swap included).
const FAKE_CLIENT: &str = "#!/bin/sh\nprintf '%s\\0' \"$1\" >> \"$RIPPLE_LOG\"\necho t\n";

/// Runs the shell plan under the fake client in an empty folder; the
/// scripts the client received.
fn run_shell(script: &[u8], work: &Path) -> Result<Vec<String>, TestCaseError> {
    let client = work.join("fake-sql");
    std::fs::write(&client, FAKE_CLIENT).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&client, std::fs::Permissions::from_mode(0o755)).unwrap();
    let cwd = work.join("cwd");
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::write(work.join("plan.sh"), script).unwrap();
    let syntax = Command::new("bash")
        .arg("-n")
        .arg(work.join("plan.sh"))
        .output()
        .unwrap();
    prop_assert!(
        syntax.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&syntax.stderr)
    );
    let log = work.join("log");
    let out = Command::new("bash")
        .arg(work.join("plan.sh"))
        .current_dir(&cwd)
        .env("RIPPLE_SQL", &client)
        .env("RIPPLE_LOG", &log)
        .output()
        .unwrap();
    prop_assert!(
        out.status.success(),
        "the plan failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    prop_assert!(
        !acts(&out.stderr) && !acts(&out.stdout),
        "running the plan put an escape or override on the terminal"
    );
    let made: Vec<_> = std::fs::read_dir(&cwd).unwrap().collect();
    prop_assert!(made.is_empty(), "the script made files: {made:?}");
    prop_assert!(!Path::new("canary").exists() && !work.join("canary").exists());
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    Ok(log
        .split('\0')
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect())
}

/// Python that parses the DAG file and lists every name it calls and every
/// name it assigns: code smuggled in by a name would add to them.
const PYTHON_NAMES: &str = r#"
import ast, json, sys
tree = ast.parse(open(sys.argv[1]).read())
calls, stores = set(), set()
for node in ast.walk(tree):
    if isinstance(node, ast.Call):
        calls.add(ast.unparse(node.func))
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
        stores.add(node.id)
print(json.dumps({"calls": sorted(calls), "stores": sorted(stores)}))
"#;

fn check_python(dag: &[u8], work: &Path) -> Result<(), TestCaseError> {
    let file = work.join("plan.py");
    std::fs::write(&file, dag).unwrap();
    let out = Command::new("python3")
        .arg("-c")
        .arg(PYTHON_NAMES)
        .arg(&file)
        .output()
        .unwrap();
    prop_assert!(
        out.status.success(),
        "python: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let allowed_calls = [
        "DAG",
        "datetime",
        "SQLExecuteQueryOperator",
        "SQLCheckOperator",
        "BashOperator",
        "enumerate",
        // The check operator's own methods (it logs a failed check's detail).
        "super().__init__",
        "super().execute",
        "super",
        "self.log.error",
        "self.get_db_hook().get_records",
        "self.get_db_hook",
        // The summary task's own code (a constant of the emitter).
        "', '.join",
        "RippleSummary",
        "RuntimeError",
        "_task_states",
        "all",
        "any",
        "bad.append",
        "bool",
        "found.get",
        "hasattr",
        "hook.get_first",
        "hook.run",
        "int",
        "isinstance",
        "len",
        "r[0].replace",
        "rows.append",
        "run.get_task_instances",
        "self.log.info",
        "state",
        "states.get",
        "states.get(t, 'none').rsplit",
        "states.get(t, 'none').rsplit('.', 1)[-1].lower",
        "states.items",
        "str",
        "str(context['dag_run'].run_id).replace",
        "str(v).lower",
        "sum",
        "t.startswith",
        "ti.get_task_states",
    ];
    for call in seen["calls"].as_array().unwrap() {
        prop_assert!(
            allowed_calls.contains(&call.as_str().unwrap()),
            "unexpected call {call}"
        );
    }
    for name in seen["stores"].as_array().unwrap() {
        let name = name.as_str().unwrap();
        let known = [
            "POOL",
            "CONN_ID",
            "ROLLBACK",
            "dag",
            "rollback_dag",
            "template_fields",
            "n",
            "q",
            "d",
            // The summary task's own code.
            "SUMMARY",
            "SUMMARY_TABLE",
            "SWAPS",
            "after",
            "bad",
            "before",
            "changed",
            "checks",
            "done",
            "failed",
            "failed_swaps",
            "found",
            "hook",
            "k",
            "p",
            "passed",
            "r",
            "rows",
            "run",
            "s",
            "state",
            "states",
            "summary",
            "swapped",
            "t",
            "ti",
            "v",
            "where",
        ]
        .contains(&name)
            || ["setup_", "run_", "validate_", "swap_", "cleanup"]
                .iter()
                .any(|p| name.starts_with(p));
        prop_assert!(known, "unexpected assignment to {name}");
    }
    Ok(())
}

/// The identifiers after each `"mart".` in `sql`, unquoted by SQL's rule
/// (`""` is one quote): what a database would take for the table names.
fn mart_tables(sql: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = sql;
    while let Some(at) = rest.find("\"mart\".\"") {
        let mut ident = String::new();
        let mut chars = rest[at + 8..].chars().peekable();
        while let Some(c) = chars.next() {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    chars.next();
                    ident.push('"');
                    continue;
                }
                break;
            }
            ident.push(c);
        }
        out.push(ident);
        rest = &rest[at + 8..];
    }
    out
}

fn check_name(name: &str) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    project(&root, name);
    let json = plan(&root, "json");
    if !json.status.success() {
        // Refused: with a reason, and the same for every format.
        let err = String::from_utf8_lossy(&json.stderr);
        prop_assert_eq!(json.status.code(), Some(2), "{}", err);
        prop_assert!(err.contains("refusing") || err.contains("error"), "{}", err);
        prop_assert_eq!(plan(&root, "shell").status.code(), Some(2));
        return Ok(());
    }
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let tasks = doc["tasks"].as_array().unwrap();
    prop_assert!(!tasks.is_empty());
    // The name survives JSON whole: the task's dataset is the table.
    let sql_quoted = name.replace('"', "\"\"");
    prop_assert!(
        tasks.iter().all(|t| t["dataset"]
            .as_str()
            .is_some_and(|d| d.contains(&sql_quoted))),
        "{doc}"
    );
    // Shell: nothing the name holds runs, and every statement that names
    // the table names it quoted exactly.
    let shell = plan(&root, "shell");
    prop_assert!(shell.status.success());
    // Read or run, the script puts nothing on a terminal that acts on it.
    prop_assert!(!acts(&shell.stdout), "raw escape or override in the script");
    prop_assert!(
        !acts(&plan(&root, "commands").stdout),
        "raw escape in commands"
    );
    let scripts = run_shell(&shell.stdout, dir.path())?;
    prop_assert!(!scripts.is_empty());
    let mut named = 0;
    for script in &scripts {
        for ident in mart_tables(script) {
            named += 1;
            // A table ripple makes past the engine's name length is the
            // name cut, then `_` and 16 hex digits of the whole name's hash.
            let cut = ident
                .len()
                .checked_sub(17)
                .filter(|&at| {
                    ident.is_char_boundary(at)
                        && ident[at..].starts_with('_')
                        && ident[at + 1..].bytes().all(|b| b.is_ascii_hexdigit())
                })
                .map(|at| &ident[..at]);
            prop_assert!(
                ident.starts_with(name)
                    || cut.is_some_and(|c| ident.len() <= 63 && name.starts_with(c)),
                "a statement names mart.{ident:?}, not the table {name:?} or one of its shadows:\n{script}"
            );
        }
    }
    prop_assert!(named > 0, "no statement names the table: {scripts:#?}");
    // Airflow: the file parses and does only what ripple writes.
    let dag = plan(&root, "airflow-dag");
    prop_assert!(dag.status.success());
    prop_assert!(!acts(&dag.stdout), "raw escape or override in the DAG file");
    check_python(&dag.stdout, dir.path())?;
    // DOT parses.
    let dot = plan(&root, "dot");
    prop_assert!(dot.status.success());
    let text = String::from_utf8(dot.stdout).unwrap();
    prop_assert!(
        graphviz_rust::parse(&text).is_ok(),
        "DOT does not parse:\n{text}"
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24),
        ..ProptestConfig::default()
    })]

    #[test]
    fn hostile_table_names_are_data_in_every_output(name in hostile_name()) {
        check_name(&name)?;
    }
}

#[test]
fn names_made_of_every_hostile_piece_are_planned_and_stay_data() {
    // Every piece, but runs of quotes (refused, below): one `"` alone. In
    // names PostgreSQL keeps whole (63 bytes, the shadow's `__backfill`
    // included; longer is refused, `names_past_the_engines_length...`).
    let pieces: Vec<&str> = PIECES
        .iter()
        .copied()
        .filter(|p| !p.contains('"'))
        .collect();
    let mut names = vec![String::from("t\"")];
    for piece in pieces {
        if names.last().unwrap().len() + piece.len() > 63 - "__backfill".len() {
            names.push(String::from("t\""));
        }
        names.last_mut().unwrap().push_str(piece);
    }
    assert!(names.len() > 1);
    for name in names {
        let dir = tempfile::tempdir().unwrap();
        project(dir.path(), &name);
        // These must plan: the property above may be all refusals.
        let out = plan(dir.path(), "json");
        assert!(
            out.status.success(),
            "{name:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        check_name(&name).unwrap();
    }
}

#[test]
fn a_name_the_sql_printer_would_change_is_refused() {
    // sqlparser prints the name `t"""` as `"t"""""` (the name `t""`): the
    // task would write a table nothing else reads.
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), "t\"\"\"");
    let out = plan(dir.path(), "json");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("run of quotes") && err.contains("jobs/a.sql"),
        "{err}"
    );
}
