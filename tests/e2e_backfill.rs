//! Backfill plans executed on real engines (PostgreSQL and DuckDB; see
//! `scripts/engines.sh`), never on a mock.
//!
//! The pipeline of `fixtures/backfill_demo/` (drop + create, create-if-missing +
//! delete + insert, a 7-day window, a MERGE upsert, an unpartitioned table,
//! a job that reads itself) is run in "production" over a bad load of
//! `raw.orders` for 2026-01-10..2026-01-12; the load is fixed; ripple plans
//! the backfill and the plan is executed. Every production table must then
//! equal, row for row, the same pipeline run from scratch on the fixed data.
//! Faults (a failing validation, a failing task, an error and a killed
//! connection inside the swap) must leave production exactly as before, and
//! the same plan, run again once the fault is gone, must converge.

#[path = "support/db.rs"]
mod db;
#[path = "support/engines.rs"]
mod engines;
#[path = "support/temp_project.rs"]
mod temp_project;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use db::{Db, engines};
use engines::{Duck, duckdb, postgres, require};

/// The jobs, in the order production runs them.
const JOBS: [&str; 7] = [
    "stg_orders",
    "orders_daily",
    "v_daily",
    "orders_7d",
    "monthly",
    "dim_customers",
    "order_log",
];

/// The production tables the plan restates.
const TABLES: [&str; 7] = JOBS;

/// `raw.orders`: four orders a day for January and February 2026, the
/// amounts of 2026-01-10..2026-01-12 a hundred times too big when `bad`.
fn raw_orders(bad: bool) -> String {
    let mut rows = Vec::new();
    let base = ripple::time::TimeKey::parse("2026-01-01").unwrap().start;
    for day in 0..59i64 {
        let date = ripple::time::Grain::Day.key(base + day * 24);
        for k in 0..4i64 {
            let id = day * 10 + k + 1;
            let mut cents = (id * 37) % 1000 * 10 + 500;
            if bad && (9..12).contains(&day) {
                cents *= 100;
            }
            let status = if id % 11 == 0 { "cancelled" } else { "ok" };
            rows.push(format!(
                "({id}, {}, timestamp '{date} {:02}:00:00', {}.{:02}, '{status}')",
                id % 7 + 1,
                k * 3 + 1,
                cents / 100,
                cents % 100
            ));
        }
    }
    format!(
        "create schema if not exists raw;
create schema if not exists mart;
create schema if not exists ops;
create table ops.approval (ok integer);
drop table if exists raw.orders;
create table raw.orders (order_id integer, customer_id integer, ordered_at timestamp, amount numeric(12, 2), status varchar);
insert into raw.orders values {};",
        rows.join(",\n")
    )
}

fn job(name: &str) -> String {
    std::fs::read_to_string(format!("fixtures/backfill_demo/jobs/{name}.sql")).unwrap()
}

/// Production: the pipeline run over `raw.orders` (bad or not).
fn production(db: &Db, bad: bool) {
    db.run_file(&raw_orders(bad)).unwrap();
    for j in JOBS {
        db.run_file(&job(j)).unwrap_or_else(|e| panic!("{j}: {e}"));
    }
}

/// The fix: `raw.orders` as it should have been.
fn fix(db: &Db) {
    db.run(
        "update raw.orders set amount = amount / 100 where ordered_at >= timestamp '2026-01-10 00:00:00' and ordered_at < timestamp '2026-01-13 00:00:00'",
    )
    .unwrap();
}

/// Every production table's rows, columns in name order, rows sorted.
fn dump(db: &Db) -> BTreeMap<String, String> {
    TABLES
        .iter()
        .map(|t| {
            let cols = db
                .run(&format!(
                    "select column_name from information_schema.columns where table_schema = 'mart' and table_name = '{t}' order by column_name"
                ))
                .unwrap();
            let cols: Vec<&str> = cols.lines().collect();
            assert!(!cols.is_empty(), "production table mart.{t} is missing");
            let order: Vec<String> = (1..=cols.len()).map(|i| i.to_string()).collect();
            let rows = db
                .run(&format!(
                    "select {} from mart.{t} order by {}",
                    cols.join(", "),
                    order.join(", ")
                ))
                .unwrap();
            (t.to_string(), rows)
        })
        .collect()
}

/// What the pipeline gives from scratch on the fixed data, on a database
/// of the same engine.
fn recompute(make: fn() -> Option<Db>) -> BTreeMap<String, String> {
    let db = make().unwrap();
    production(&db, false);
    dump(&db)
}

/// Shadow, work and scratch tables left in the database.
fn leftovers(db: &Db) -> Vec<String> {
    db.run("select table_schema || '.' || table_name from information_schema.tables where table_name like '%\\_\\_backfill%' escape '\\' order by 1")
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The pipeline's project folder for `db`'s dialect, with `extra` lines
/// appended to ripple.yml.
fn project(db: &Db, extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("jobs")).unwrap();
    for j in JOBS {
        std::fs::write(dir.path().join(format!("jobs/{j}.sql")), job(j)).unwrap();
    }
    let yml = std::fs::read_to_string("fixtures/backfill_demo/ripple.yml")
        .unwrap()
        .replace("dialect: duckdb", &format!("dialect: {}", db.dialect()));
    std::fs::write(dir.path().join("ripple.yml"), format!("{yml}{extra}")).unwrap();
    dir
}

/// `ripple plan` for the bad days, in `format`.
fn plan(dir: &Path, format: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_ripple"))
        .args([
            "plan",
            "raw.orders",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-12",
            "--as-of",
            "2026-03-01",
            "--format",
            format,
            "--project",
        ])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs the shell plan `script` with `$RIPPLE_SQL` = `sql` (and `args`);
/// its exit code and standard error.
fn run_shell(dir: &Path, script: &str, sql: &str, args: &[&str]) -> (i32, String) {
    let path = dir.join("plan.sh");
    std::fs::write(&path, script).unwrap();
    let out = Command::new("bash")
        .arg(&path)
        .args(args)
        .env("RIPPLE_SQL", sql)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// A bad production, fixed at the source: what a backfill starts from.
fn broken(make: fn() -> Option<Db>) -> Option<(Db, BTreeMap<String, String>)> {
    let db = make()?;
    production(&db, true);
    fix(&db);
    let before = dump(&db);
    Some((db, before))
}

#[test]
fn a_shell_plan_restates_exactly_what_a_recompute_gives() {
    for make in engines() {
        let Some((db, before)) = broken(make) else {
            continue;
        };
        let expected = recompute(make);
        assert_ne!(before, expected, "the bad load changed production");
        // Rows outside the restated days are not rewritten (PostgreSQL can
        // tell: their row versions stay).
        let untouched = "select order_date, xmin from mart.orders_daily where order_date < date '2026-01-10' or order_date > date '2026-01-12' order by 1";
        let versions = matches!(db, Db::Pg(_)).then(|| db.run(untouched).unwrap());
        let dir = project(&db, "");
        let (code, stderr) = run_shell(dir.path(), &plan(dir.path(), "shell"), &db.command(), &[]);
        assert_eq!(code, 0, "{}: {stderr}", db.dialect());
        assert_eq!(dump(&db), expected, "{}", db.dialect());
        if let Some(v) = versions {
            assert_eq!(db.run(untouched).unwrap(), v, "rows outside were rewritten");
        }
        assert_eq!(
            leftovers(&db),
            Vec::<String>::new(),
            "shadows are cleaned up"
        );
        // Run again, it converges to the same state.
        let (code, stderr) = run_shell(dir.path(), &plan(dir.path(), "shell"), &db.command(), &[]);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(dump(&db), expected);
    }
}

#[test]
fn shadows_in_a_schema_of_their_own_and_tuned_checks() {
    for make in engines() {
        let Some((db, _)) = broken(make) else {
            continue;
        };
        let expected = recompute(make);
        let dir = project(
            &db,
            "backfill:\n  shadow: \"{schema}_shadow.{table}\"\n  checks: { row_count: 0.5 }\n  keep_shadows: true\n  mart.orders_daily:\n    checks: { row_count: false, non_empty: false }\n",
        );
        // That last key sits under backfill: it is rejected, with the place named.
        let out = Command::new(env!("CARGO_BIN_EXE_ripple"))
            .args([
                "plan",
                "raw.orders",
                "--from",
                "2026-01-10",
                "--to",
                "2026-01-12",
                "--as-of",
                "2026-03-01",
                "--project",
            ])
            .arg(dir.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("unknown key `mart.orders_daily`"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let dir = project(
            &db,
            "  mart.orders_daily:\n    checks: { row_count: false, non_empty: false }\nbackfill:\n  shadow: \"{schema}_shadow.{table}\"\n  checks: { row_count: 0.5 }\n  keep_shadows: true\n",
        );
        let doc: serde_json::Value = serde_json::from_str(&plan(dir.path(), "json")).unwrap();
        let checks_of = |dataset: &str| -> Vec<String> {
            doc["tasks"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["dataset"] == dataset)
                .unwrap()["validations"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v["check"].as_str().unwrap().to_string())
                .collect()
        };
        assert!(checks_of("table.mart.orders_daily").is_empty());
        assert_eq!(
            checks_of("table.mart.orders_7d"),
            ["non_empty", "row_count"]
        );
        let stg = &doc["tasks"][0]["validations"][1]["sql"];
        assert!(stg.as_str().unwrap().contains("< (1 - 0.5) * p.n"), "{stg}");
        let (code, stderr) = run_shell(dir.path(), &plan(dir.path(), "shell"), &db.command(), &[]);
        assert_eq!(code, 0, "{}: {stderr}", db.dialect());
        assert_eq!(dump(&db), expected, "{}", db.dialect());
        // Kept, in their own schema.
        let kept = db
            .run("select table_name from information_schema.tables where table_schema = 'mart_shadow' order by 1")
            .unwrap();
        assert_eq!(
            kept, "dim_customers\nmonthly\norder_log\norders_7d\norders_daily\nstg_orders\nv_daily",
            "kept in their own schema, work tables gone"
        );
    }
}

/// The plan's JSON, run step by step by a small driver: production checked
/// after every statement before the swap.
fn drive_json(db: &Db, doc: &serde_json::Value, before: &BTreeMap<String, String>) {
    let list = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    let mut steps: Vec<String> = Vec::new();
    for s in doc["setup"].as_array().unwrap() {
        steps.extend(list(&s["sql"]));
    }
    for t in doc["tasks"].as_array().unwrap() {
        steps.extend(list(&t["commands"]["sql"]));
    }
    for statement in steps {
        if matches!(statement.as_str(), "begin" | "commit") {
            continue;
        }
        db.run(&statement)
            .unwrap_or_else(|e| panic!("{}: {statement}: {e}", db.dialect()));
        assert_eq!(&dump(db), before, "production changed by: {statement}");
    }
    for t in doc["tasks"].as_array().unwrap() {
        for v in t["validations"].as_array().unwrap() {
            let sql = v["sql"].as_str().unwrap();
            let got = db.run(sql).unwrap();
            assert!(
                got == "t" || got == "true",
                "{} failed: {sql} -> {got}",
                t["id"]
            );
        }
    }
    assert_eq!(&dump(db), before);
}

fn scripts(doc: &serde_json::Value, key: &str) -> Vec<String> {
    let all = match &doc[key] {
        serde_json::Value::Array(a) => a.clone(),
        _ => Vec::new(),
    };
    all.iter()
        .map(|s| match s {
            serde_json::Value::Array(statements) => statements
                .iter()
                .map(|x| format!("{};", x.as_str().unwrap()))
                .collect::<Vec<_>>()
                .join("\n"),
            serde_json::Value::Object(setup) => setup["sql"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| format!("{};", x.as_str().unwrap()))
                .collect::<Vec<_>>()
                .join("\n"),
            other => format!("{};", other.as_str().unwrap()),
        })
        .collect()
}

#[test]
fn a_json_plan_touches_production_only_in_its_swap() {
    for make in engines() {
        let Some((db, before)) = broken(make) else {
            continue;
        };
        let expected = recompute(make);
        let dir = project(&db, "");
        let doc: serde_json::Value = serde_json::from_str(&plan(dir.path(), "json")).unwrap();
        assert_eq!(
            doc["swap_scripts"].as_array().unwrap().len(),
            1,
            "one transaction"
        );
        drive_json(&db, &doc, &before);
        // The row count is checked partition by partition: a day the shadow
        // lost fails, and the message names it.
        let stg = doc["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["dataset"] == "table.mart.stg_orders")
            .unwrap();
        let rows = stg["validations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["check"] == "row_count")
            .unwrap();
        db.run("create table mart.saved as select * from mart.stg_orders__backfill")
            .unwrap();
        db.run("delete from mart.stg_orders__backfill where order_date = date '2026-01-11'")
            .unwrap();
        let got = db.run(rows["sql"].as_str().unwrap()).unwrap();
        assert!(got == "f" || got == "false", "{got}");
        let detail = db.run(rows["detail"].as_str().unwrap()).unwrap();
        assert!(
            detail.starts_with("partition 2026-01-11: shadow 0 rows, production "),
            "{detail}"
        );
        db.run_file("delete from mart.stg_orders__backfill; insert into mart.stg_orders__backfill select * from mart.saved; drop table mart.saved;")
            .unwrap();
        for script in scripts(&doc, "swap_scripts") {
            db.run(&script).unwrap();
        }
        assert_eq!(dump(&db), expected, "{}", db.dialect());
        for script in scripts(&doc, "cleanup") {
            db.run(&script).unwrap();
        }
        assert_eq!(leftovers(&db), Vec::<String>::new());
    }
}

#[test]
fn an_error_or_a_lost_connection_inside_the_swap_leaves_production_as_before() {
    for make in engines() {
        let Some((db, before)) = broken(make) else {
            continue;
        };
        let expected = recompute(make);
        let dir = project(&db, "");
        let doc: serde_json::Value = serde_json::from_str(&plan(dir.path(), "json")).unwrap();
        drive_json(&db, &doc, &before);
        let swap: Vec<String> = doc["swap_scripts"][0]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| format!("{};", s.as_str().unwrap()))
            .collect();
        // An error after the first delete: all of the swap is undone.
        let mut failing = swap.clone();
        failing.insert(2, "select * from ripple_no_such_table;".to_string());
        assert!(db.run(&failing.join("\n")).is_err());
        assert_eq!(
            dump(&db),
            before,
            "{}: an error inside the swap",
            db.dialect()
        );
        // The session killed after the first delete: likewise.
        let mut client = db
            .stdin_session()
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = client.stdin.take().unwrap();
        writeln!(stdin, "{}\n{}", swap[0], swap[1]).unwrap();
        stdin.flush().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(700));
        client.kill().unwrap();
        let _ = client.wait();
        drop(stdin);
        assert_eq!(dump(&db), before, "{}: a killed session", db.dialect());
        // Recovery, as docs/plan.md says: run the plan again.
        let (code, stderr) = run_shell(dir.path(), &plan(dir.path(), "shell"), &db.command(), &[]);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(dump(&db), expected, "{}", db.dialect());
    }
}

/// A `$RIPPLE_SQL` that fails its `n`-th call, as a warehouse that times
/// out would.
fn failing_client(dir: &Path, real: &str, n: usize) -> String {
    let path: PathBuf = dir.join("flaky.sh");
    let counter = dir.join("calls");
    std::fs::write(
        &path,
        format!(
            "#!/usr/bin/env bash\nn=$(cat {c} 2>/dev/null || echo 0); n=$((n + 1)); echo $n > {c}\nif [ $n = {n} ]; then echo 'injected failure' >&2; exit 1; fi\nexec {real} \"$1\"\n",
            c = engines::shell_quote(&counter.to_string_lossy()),
        ),
    )
    .unwrap();
    format!("bash {}", engines::shell_quote(&path.to_string_lossy()))
}

#[test]
fn a_failed_task_or_validation_stops_before_the_swap_and_a_rerun_converges() {
    for make in engines() {
        let Some((db, before)) = broken(make) else {
            continue;
        };
        let expected = recompute(make);
        // A validation of the team's own that fails until someone approves.
        let dir = project(
            &db,
            "  mart.orders_daily:\n    validate: \"select count(*) > 0 from ops.approval\"\n",
        );
        let script = plan(dir.path(), "shell");
        let (code, stderr) = run_shell(dir.path(), &script, &db.command(), &[]);
        assert_eq!(code, 1, "{stderr}");
        assert!(
            stderr.contains("validation custom of mart.orders_daily@2026-01-10..2026-01-12 failed"),
            "{stderr}"
        );
        assert_eq!(dump(&db), before, "{}: a failed validation", db.dialect());
        assert!(!leftovers(&db).is_empty());
        let (code, stderr) = run_shell(dir.path(), &script, &db.command(), &["rollback"]);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(
            leftovers(&db),
            Vec::<String>::new(),
            "rollback drops the shadows"
        );
        assert_eq!(dump(&db), before);
        db.run("insert into ops.approval values (1)").unwrap();
        // Now a task fails (the 9th call: the third task), then runs.
        let flaky = failing_client(dir.path(), &db.command(), 9);
        let (code, stderr) = run_shell(dir.path(), &script, &flaky, &[]);
        assert_eq!(code, 1, "{stderr}");
        assert!(stderr.contains("injected failure"), "{stderr}");
        assert_eq!(dump(&db), before, "{}: a failed task", db.dialect());
        let (code, stderr) = run_shell(dir.path(), &script, &db.command(), &[]);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(dump(&db), expected, "{}", db.dialect());
    }
}

#[test]
fn views_drifted_columns_and_late_partitions_survive_the_swap() {
    for make in engines() {
        let Some((db, _)) = broken(make) else {
            continue;
        };
        let expected = recompute(make);
        // A view on a partially restated table and one on a rebuilt one.
        db.run("create view mart.v_dash as select * from mart.orders_daily")
            .unwrap();
        db.run("create view mart.v_customers as select customer_id, total from mart.dim_customers")
            .unwrap();
        // Production's columns in another order than the job writes them.
        db.run_file(
            "create table mart.orders_7d_drift as select revenue_7d, order_date from mart.orders_7d;
drop table mart.orders_7d;
alter table mart.orders_7d_drift rename to orders_7d;",
        )
        .unwrap();
        // A late day: 2026-01-11 never reached production.
        db.run_file(
            "delete from mart.stg_orders where order_date = date '2026-01-11';
delete from mart.orders_daily where order_date = date '2026-01-11';",
        )
        .unwrap();
        let dir = project(&db, "");
        let (code, stderr) = run_shell(dir.path(), &plan(dir.path(), "shell"), &db.command(), &[]);
        assert_eq!(code, 0, "{}: {stderr}", db.dialect());
        assert_eq!(dump(&db), expected, "{}", db.dialect());
        // The views are still there and read the restated rows.
        assert_eq!(
            db.run("select count(*) from mart.v_dash where order_date = date '2026-01-11'")
                .unwrap(),
            "1"
        );
        assert_eq!(
            db.run("select customer_id, total from mart.v_customers order by 1")
                .unwrap(),
            db.run("select customer_id, total from mart.dim_customers order by 1")
                .unwrap()
        );
        // Production keeps its own column order.
        assert_eq!(
            db.run("select column_name from information_schema.columns where table_schema = 'mart' and table_name = 'orders_7d' order by ordinal_position")
                .unwrap(),
            "revenue_7d\norder_date"
        );
    }
}

#[test]
fn the_readme_demo_runs_all_the_way() {
    let Some(duck) = require(duckdb(), "the DuckDB CLI") else {
        return;
    };
    let out = Command::new("bash")
        .arg("scripts/backfill_demo.sh")
        .env("RIPPLE", env!("CARGO_BIN_EXE_ripple"))
        .env(
            "DUCKDB",
            duck.sql_command()
                .split(' ')
                .next()
                .unwrap()
                .trim_matches('\''),
        )
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for t in JOBS {
        assert!(stdout.contains(&format!("mart.{t}: same")), "{stdout}");
    }
}

/// The dbt side: `fixtures/backfill_dbt` on dbt-duckdb.
struct DbtProject {
    dir: tempfile::TempDir,
    dbt: PathBuf,
}

impl DbtProject {
    fn new(dbt: PathBuf) -> Self {
        let dir = tempfile::tempdir().unwrap();
        temp_project::copy_tree(
            Path::new("fixtures/backfill_dbt"),
            &dir.path().join("project"),
        );
        // A `dbt` that fails on `orders_7d` while FAIL_DBT is set, as a
        // warehouse error in the middle of a plan would.
        let fake = dir.path().join("bin/dbt");
        std::fs::create_dir_all(fake.parent().unwrap()).unwrap();
        std::fs::write(
            &fake,
            format!(
                "#!/usr/bin/env bash\nif [ -n \"${{FAIL_DBT:-}}\" ] && [[ \" $* \" == *\"/orders_7d.sql \"* ]]; then echo 'injected dbt failure' >&2; exit 1; fi\nexec {} \"$@\"\n",
                engines::shell_quote(&dbt.to_string_lossy())
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        DbtProject { dir, dbt }
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    /// A command run in the project, for the DuckDB file `db`.
    fn command(&self, program: &str, db: &Path) -> Command {
        let mut c = Command::new(program);
        let path = format!(
            "{}:{}",
            self.dir.path().join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        c.current_dir(self.project())
            .env("PATH", path)
            .env("DBT_PROFILES_DIR", self.project())
            .env("DBT_TARGET_PATH", self.dir.path().join("target"))
            .env("DBT_LOG_PATH", self.dir.path().join("logs"))
            .env("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
            .env("RIPPLE_DUCKDB_PATH", db);
        c
    }

    /// Production's first build, January and February.
    fn build(&self, db: &Path) {
        let out = self
            .command(&self.dbt.to_string_lossy(), db)
            .args([
                "run",
                "--event-time-start",
                "2026-01-01",
                "--event-time-end",
                "2026-03-01",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

/// Every model's rows (views included), columns in name order.
fn dump_models(duck: &Duck) -> BTreeMap<String, String> {
    [
        "stg_orders",
        "orders_daily",
        "orders_7d",
        "fct_orders",
        "dim_customers",
    ]
    .iter()
    .map(|t| {
        let rows = duck
            .run(&format!("select * from main.{t} order by all"))
            .unwrap_or_else(|e| panic!("production model main.{t}: {e}"));
        (t.to_string(), rows)
    })
    .collect()
}

fn raw_into(duck: &Duck, bad: bool) {
    duck.run_file(&raw_orders(bad)).unwrap();
}

#[test]
fn the_dbt_executor_builds_shadows_through_an_overlay() {
    let Some(dbt) = require(engines::dbt(), "dbt (dbt-duckdb)") else {
        return;
    };
    let Some(_) = require(duckdb(), "the DuckDB CLI") else {
        return;
    };
    let p = DbtProject::new(dbt);
    let expected_db = p.dir.path().join("expected.duckdb");
    let expected_duck = engines::duckdb_file(&expected_db).unwrap();
    raw_into(&expected_duck, false);
    p.build(&expected_db);
    let expected = dump_models(&expected_duck);
    let db = p.dir.path().join("warehouse.duckdb");
    let duck = engines::duckdb_file(&db).unwrap();
    raw_into(&duck, true);
    p.build(&db);
    duck.run(
        "update raw.orders set amount = amount / 100 where ordered_at >= timestamp '2026-01-10 00:00:00' and ordered_at < timestamp '2026-01-13 00:00:00'",
    )
    .unwrap();
    let before = dump_models(&duck);
    assert_ne!(before, expected);
    let out = Command::new(env!("CARGO_BIN_EXE_ripple"))
        .args([
            "plan",
            "raw.orders",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-12",
            "--as-of",
            "2026-03-01",
            "--executor",
            "dbt",
            "--format",
            "shell",
            "--project",
        ])
        .arg(p.project())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let script = String::from_utf8(out.stdout).unwrap();
    // Microbatch models get their dates; everything else a full refresh
    // of its shadow (the incremental fct_orders reads itself).
    // Each model is selected by its file: a name is dbt selector syntax.
    // The shadows are the overlay's, written once, not every command's.
    assert!(
        script.contains("--select path:models/orders_daily.sql --event-time-start 2026-01-10 --event-time-end 2026-01-13"),
        "{script}"
    );
    assert!(script.contains("--select path:models/fct_orders.sql --full-refresh"));
    assert!(!script.contains("--vars"));
    std::fs::write(p.dir.path().join("plan.sh"), &script).unwrap();
    let run = |fail: bool| {
        let mut c = p.command("bash", &db);
        c.arg(p.dir.path().join("plan.sh"))
            .env("RIPPLE_SQL", duck.sql_command());
        if fail {
            c.env("FAIL_DBT", "1");
        }
        let out = c.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    // A dbt task fails: production as before.
    let (code, stderr) = run(true);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("injected dbt failure"), "{stderr}");
    assert_eq!(dump_models(&duck), before);
    // Healed, the same plan converges to the recompute.
    let (code, stderr) = run(false);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(dump_models(&duck), expected);
    assert_eq!(
        duck.run(
            "select count(*) from information_schema.tables where table_name like '%backfill%'"
        )
        .unwrap(),
        "0",
        "shadows and shadow views are dropped"
    );
}

#[test]
fn the_airflow_dag_imports_in_airflow_3_and_2() {
    for (python, name) in [
        (engines::airflow_python(), "Airflow 3"),
        (engines::airflow2_python(), "Airflow 2"),
    ] {
        let Some(python) = require(python, name) else {
            continue;
        };
        the_airflow_dag_imports_in(&python);
    }
}

fn the_airflow_dag_imports_in(python: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "plan",
        "landing.orders",
        "--from",
        "2026-01-10",
        "--to",
        "2026-01-11",
        "--as-of",
        "2026-02-01",
        "--project",
        "fixtures/shop",
        "--format",
    ];
    let render = |format: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_ripple"))
            .args(args)
            .arg(format)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let file = render("airflow-dag");
    // The project's DAGs are production: a wait before each batch and the swap.
    let guarded = String::from_utf8_lossy(&file).contains("PRODUCTION_DAGS = [");
    std::fs::write(dir.path().join("plan.py"), file).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&render("json")).unwrap();
    let count = |key: &str| doc[key].as_array().unwrap().len();
    let validations: usize = doc["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["validations"].as_array().unwrap().len())
        .sum();
    let waits = if guarded { count("tasks") + 1 } else { 0 };
    // Setups, runs, checks, swaps, the cleanup, the summary, the waits.
    let want = count("setup") + count("tasks") + validations + count("swap_scripts") + 2 + waits;
    let out = Command::new(python)
        .current_dir(dir.path())
        .env("AIRFLOW_HOME", dir.path().join("airflow"))
        // A loaded machine (CI, 2 cores) took over Airflow's 30 s to import
        // a large DAG file: the import timed out, not the test.
        .env("AIRFLOW__CORE__DAGBAG_IMPORT_TIMEOUT", "600")
        .arg("-c")
        .arg(IMPORT_DAG)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap_or("{}"))
        .unwrap_or_else(|e| panic!("{e}: {stdout}{}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(report["errors"], serde_json::json!({}), "{report}");
    assert_eq!(report["tasks"], want, "{report}");
    // The swap waits for every validation and every run task (a task whose
    // checks are all off has no validation to wait on); cleanup for the swap.
    if guarded {
        assert_eq!(report["waits"].as_array().unwrap().len(), waits, "{report}");
        assert_eq!(report["swap_after"], 1, "{report}");
        assert_eq!(
            report["wait_swap_after"],
            validations + count("tasks"),
            "{report}"
        );
    } else {
        assert_eq!(
            report["swap_after"],
            validations + count("tasks"),
            "{report}"
        );
    }
    // The summary ends the run after everything else, whatever happened;
    // the cleanup waits for it (it reads the fingerprints) and the swap.
    assert_eq!(
        report["cleanup_after"],
        serde_json::json!(["summary", "swap_0"])
    );
    assert_eq!(
        report["summary_after"],
        count("tasks") + validations + count("swap_scripts"),
        "{report}"
    );
    assert!(
        report["summary_rule"]
            .as_str()
            .unwrap_or_default()
            .to_lowercase()
            .contains("all_done"),
        "{report}"
    );
    // Each batch says where it stands in Airflow's UI: one name per task.
    let names = report["batch_names"].as_array().unwrap();
    assert_eq!(names.len(), count("tasks"), "{report}");
    assert!(
        names
            .iter()
            .any(|n| n.as_str().unwrap().contains("· batch 2 of ")),
        "{report}"
    );
    assert_eq!(report["templated"], serde_json::json!([]), "{report}");
    // A second DAG, triggered by hand, drops every shadow.
    assert_eq!(
        report["rollback"],
        serde_json::json!([["drop_shadows", count("rollback")]]),
        "{report}"
    );
    // The Bash operator from where each Airflow keeps it (3 deprecates
    // `airflow.operators.bash`; 2.10 may lack the standard provider).
    let from = report["bash_from"].as_str().unwrap_or_default();
    if report["standard"] == true {
        assert_eq!(
            from, "airflow.providers.standard.operators.bash",
            "{report}"
        );
    } else {
        assert_eq!(from, "airflow.operators.bash", "{report}");
    }
}

/// A dbt task of the Airflow DAG, run by Airflow (3 and 2) itself: its
/// command stays short however many models the plan restates (2,200 here,
/// whose overlay script is over the 128 KiB a command-line argument may
/// hold: inlined, every dbt task failed with "Argument list too long"),
/// and the task builds its model's shadow through the overlay.
#[test]
fn a_dbt_task_of_the_airflow_dag_runs_in_airflow_whatever_the_plan_s_size() {
    let (Some(dbt), Some(_)) = (
        require(engines::dbt(), "dbt (dbt-duckdb)"),
        require(duckdb(), "the DuckDB CLI"),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    copy_dir(Path::new("fixtures/backfill_dbt"), &project);
    for i in 1..=2200 {
        let up = if i <= 20 {
            "orders_daily".to_string()
        } else {
            format!("m{}", i % 20 + 1)
        };
        std::fs::write(
            project.join(format!("models/m{i}.sql")),
            format!("{{{{ config(materialized='table') }}}}\nselect order_date, revenue from {{{{ ref('{up}') }}}}\n"),
        )
        .unwrap();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_ripple"))
        .args([
            "plan",
            "raw.orders",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-11",
        ])
        .args([
            "--as-of",
            "2026-02-01",
            "--executor",
            "dbt",
            "--format",
            "airflow-dag",
            "--project",
        ])
        .arg(&project)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dag = String::from_utf8(out.stdout).unwrap();
    let overlay = dag
        .lines()
        .find(|l| l.starts_with("DBT_OVERLAY = "))
        .unwrap();
    assert!(overlay.len() > 128 * 1024, "{}", overlay.len());
    std::fs::write(dir.path().join("plan.py"), &dag).unwrap();
    for (python, name) in [
        (engines::airflow_python(), "Airflow 3"),
        (engines::airflow2_python(), "Airflow 2"),
    ] {
        let Some(python) = require(python, name) else {
            continue;
        };
        let db = dir.path().join(format!("{}.duckdb", name.replace(' ', "")));
        let duck = engines::duckdb_file(&db).unwrap();
        duck.run("create schema raw; create table raw.orders as select 1 as order_id, 1 as customer_id, timestamp '2026-01-10' as ordered_at, cast(1 as decimal(12, 2)) as amount, 'ok' as status").unwrap();
        let out = Command::new(&python)
            .current_dir(dir.path())
            .env(
                "AIRFLOW_HOME",
                dir.path()
                    .join(format!("airflow-{}", name.replace(' ', ""))),
            )
            .env("AIRFLOW__CORE__DAGBAG_IMPORT_TIMEOUT", "600")
            .env("RIPPLE_DBT_PROJECT", &project)
            .env("RIPPLE_DUCKDB_PATH", &db)
            .env("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    dbt.parent().unwrap().display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            )
            .arg("-c")
            .arg(format!("{LOAD_DAG}{RUN_DBT_TASK}"))
            .output()
            .unwrap();
        let said = format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{name}: {said}");
        let report: serde_json::Value = serde_json::from_str(
            said.lines()
                .find(|l| l.starts_with("{\"task\""))
                .unwrap_or("{}"),
        )
        .unwrap_or_else(|e| panic!("{e}: {said}"));
        assert_eq!(
            report["task"], "stg_orders_2026-01-10..2026-01-11",
            "{said}"
        );
        assert!(
            report["longest_command"].as_u64().unwrap() < 2048,
            "{report}"
        );
        assert_eq!(
            duck.run("select count(*) from main.stg_orders__backfill")
                .unwrap(),
            "1",
            "{name}: the shadow view, through the overlay: {said}"
        );
    }
}

/// Loads `plan.py` into a DagBag, Airflow 3's or 2's: the start of the
/// scripts below.
const LOAD_DAG: &str = r#"
import json
try:
    from airflow.dag_processing.dagbag import DagBag
    bag = DagBag(dag_folder="plan.py")
except ImportError:
    from airflow.models.dagbag import DagBag
    bag = DagBag(dag_folder="plan.py", include_examples=False)
"#;

/// Runs the first dbt task of the loaded DAG as Airflow's operator does
/// (after [`LOAD_DAG`]).
const RUN_DBT_TASK: &str = r#"
assert not bag.import_errors, bag.import_errors
dag = bag.dags["ripple_backfill"]
commands = [len(t.bash_command) for t in dag.tasks if hasattr(t, "bash_command")]
task = next(t for t in dag.tasks if type(t).__name__ == "DbtOperator")
task.execute(context={})
print(json.dumps({"task": task.task_id, "longest_command": max(commands)}))
"#;

#[test]
fn jinja_in_a_validation_reaches_airflow_as_text() {
    // A custom validation holding `{{ var.value.secret }}` (a literal, for
    // ripple): Airflow must not render it and read a Variable into the SQL.
    let Some(python) = require(engines::airflow_python(), "Airflow 3") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    copy_dir(Path::new("fixtures/backfill_airflow"), &project);
    let config = project.join("ripple.yml");
    let text = std::fs::read_to_string(&config).unwrap().replace(
        "  mart.daily: { grain: day }",
        "  mart.daily:\n    grain: day\n    validate: \"select count(*) = 0 from {table} where orders < 0 and '{{ var.value.secret }}' <> ''\"",
    );
    assert!(text.contains("var.value.secret"));
    std::fs::write(&config, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ripple"))
        .args([
            "plan",
            "landing.orders",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-11",
        ])
        .args([
            "--as-of",
            "2026-02-01",
            "--format",
            "airflow-dag",
            "--project",
        ])
        .arg(&project)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(dir.path().join("plan.py"), &out.stdout).unwrap();
    let out = Command::new(python)
        .current_dir(dir.path())
        .env("AIRFLOW_HOME", dir.path().join("airflow"))
        // A loaded machine (CI, 2 cores) took over Airflow's 30 s to import
        // a large DAG file: the import timed out, not the test.
        .env("AIRFLOW__CORE__DAGBAG_IMPORT_TIMEOUT", "600")
        .arg("-c")
        .arg(format!("{LOAD_DAG}{RENDER_DAG}"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap_or("{}"))
        .unwrap_or_else(|e| panic!("{e}: {stdout}{}", String::from_utf8_lossy(&out.stderr)));
    let literal = report["literal"].as_array().unwrap();
    assert!(!literal.is_empty(), "the task with the literal: {report}");
    for sql in literal {
        assert!(
            sql.as_str().unwrap().contains("'{{ var.value.secret }}'"),
            "{report}"
        );
    }
}

/// Renders every task of the loaded DAG as Airflow would for a run (after
/// [`LOAD_DAG`]), and reports the SQL of those that hold the
/// `{{ var.value.secret }}` literal.
const RENDER_DAG: &str = r#"
dag = bag.dags["ripple_backfill"]
literal = []
for task in dag.tasks:
    # A Variable lookup would fail here (none is set): rendering must not try.
    task.render_template_fields({"ds": "2026-01-10", "var": {"value": {}}})
    sql = getattr(task, "sql", None)
    text = json.dumps(sql)
    if "secret" in text:
        literal.extend(sql if isinstance(sql, list) else [sql])
print(json.dumps({"literal": literal}))
"#;

/// Loads `plan.py` into a real DagBag (Airflow 3's or 2's) and reports
/// what Airflow saw.
const IMPORT_DAG: &str = r#"
import importlib.util, json, sys, warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    try:
        from airflow.dag_processing.dagbag import DagBag
        bag = DagBag(dag_folder="plan.py")
    except ImportError:
        from airflow.models.dagbag import DagBag
        bag = DagBag(dag_folder="plan.py", include_examples=False)
dag = bag.dags.get("ripple_backfill")
print(json.dumps({
    "errors": {k: str(v) for k, v in bag.import_errors.items()},
    "tasks": len(dag.tasks) if dag else 0,
    "swap_after": len(dag.get_task("swap_0").upstream_task_ids) if dag else 0,
    "wait_swap_after": len(dag.get_task("wait_swap").upstream_task_ids) if dag and dag.has_task("wait_swap") else 0,
    "waits": sorted(t.task_id for t in dag.tasks if t.task_id.startswith("wait")) if dag else [],
    "cleanup_after": sorted(dag.get_task("cleanup").upstream_task_ids) if dag else [],
    "summary_after": len(dag.get_task("summary").upstream_task_ids) if dag else 0,
    "summary_rule": str(dag.get_task("summary").trigger_rule) if dag else "",
    "batch_names": sorted({t.task_display_name for t in dag.tasks if " · batch " in t.task_display_name}) if dag else [],
    "templated": sorted(t.task_id for t in dag.tasks if t.template_fields) if dag else [],
    "rollback": [(t.task_id, len(t.sql)) for t in bag.dags["ripple_backfill_rollback"].tasks]
        if "ripple_backfill_rollback" in bag.dags else [],
    "bash_from": next((m._Bash.__module__ for m in list(sys.modules.values())
        if getattr(m, "__file__", None) and m.__file__.endswith("plan.py") and hasattr(m, "_Bash")), None),
    "standard": importlib.util.find_spec("airflow.providers.standard") is not None,
}))
"#;

/// The Airflow DAG of `fixtures/backfill_airflow`: each task's SQL, as
/// Airflow renders it for a run.
fn airflow_task_sql(
    project: &Path,
    task: &str,
) -> (String, std::collections::BTreeMap<String, String>) {
    let project =
        ripple::ingest::load_project(project, &ripple::ingest::LoadOptions::default()).unwrap();
    let job = project
        .jobs
        .iter()
        .find(|j| j.id == format!("airflow:orders.{task}"))
        .unwrap();
    let t = job.airflow.as_ref().unwrap().template.clone().unwrap();
    (t.text, t.params.expect("the task's params are read"))
}

/// Production: the DAG run for every day of January and February.
fn airflow_production(db: &Db, project: &Path, landing_bad: bool) {
    let raw = raw_orders(landing_bad).replace("raw.orders", "landing.orders");
    db.run_file(&format!(
        "create schema if not exists landing;\n{raw}\ncreate schema if not exists raw;\ncreate table raw.orders (order_id integer, customer_id integer, ordered_at timestamp, amount numeric(12, 2), status varchar);\ncreate table mart.daily (order_date date, orders bigint, revenue numeric(14, 2));"
    ))
    .unwrap();
    let base = ripple::time::TimeKey::parse("2026-01-01").unwrap().start;
    for task in ["load", "daily"] {
        let (text, params) = airflow_task_sql(project, task);
        let mut script = String::new();
        for day in 0..59i64 {
            let at = |h: i64| format!("{}T00:00:00", ripple::time::Grain::Day.key(h));
            let sql = ripple::ingest::airflow::render_for_run(
                &text,
                Some(&params),
                &at(base + day * 24),
                &at(base + day * 24 + 24),
            )
            .unwrap();
            script.push_str(sql.trim().trim_end_matches(';'));
            script.push_str(";\n");
        }
        db.run_file(&script).unwrap();
    }
}

fn airflow_dump(db: &Db) -> (String, String) {
    (
        db.run(
            "select order_id, customer_id, ordered_at, amount, status from raw.orders order by 1",
        )
        .unwrap(),
        db.run("select order_date, orders, revenue from mart.daily order by 1")
            .unwrap(),
    )
}

/// The project of `fixtures/backfill_airflow` in `dir`, for `db`; with
/// `shifted`, its `daily` task closes the day before its run's
/// (`macros.ds_add(ds, -1)`), as teams whose late rows land overnight do.
fn airflow_project(db: &Db, dir: &Path, shifted: bool) {
    temp_project::copy_tree(Path::new("fixtures/backfill_airflow"), dir);
    let yml = std::fs::read_to_string(dir.join("ripple.yml"))
        .unwrap()
        .replace("dialect: postgres", &format!("dialect: {}", db.dialect()));
    std::fs::write(dir.join("ripple.yml"), yml).unwrap();
    if shifted {
        let dag = std::fs::read_to_string(dir.join("dags/orders.py")).unwrap();
        let (load, daily) = dag.split_once("daily = ").unwrap();
        let daily = daily.replace("'{{ ds }}'", "'{{ macros.ds_add(ds, -1) }}'");
        std::fs::write(dir.join("dags/orders.py"), format!("{load}daily = {daily}")).unwrap();
    }
}

#[test]
fn airflow_tasks_run_per_date_into_shadows_even_batches_at_once() {
    for (make, shifted) in engines().into_iter().flat_map(|m| [(m, false), (m, true)]) {
        let Some(db) = make() else {
            continue;
        };
        let dir = tempfile::tempdir().unwrap();
        airflow_project(&db, dir.path(), shifted);
        let expected_db = make().unwrap();
        airflow_production(&expected_db, dir.path(), false);
        let expected = airflow_dump(&expected_db);
        airflow_production(&db, dir.path(), true);
        db.run(
            "update landing.orders set amount = amount / 100 where ordered_at >= timestamp '2026-01-10 00:00:00' and ordered_at < timestamp '2026-01-13 00:00:00'",
        )
        .unwrap();
        let before = airflow_dump(&db);
        assert_ne!(before, expected);
        let plan_of = |format: &str| {
            let out = Command::new(env!("CARGO_BIN_EXE_ripple"))
                .args([
                    "plan",
                    "landing.orders",
                    "--from",
                    "2026-01-10",
                    "--to",
                    "2026-01-12",
                    "--as-of",
                    "2026-03-01",
                    "--format",
                    format,
                    "--project",
                ])
                .arg(dir.path())
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout).unwrap()
        };
        // The Airflow CLIs write production: a runnable plan refuses them.
        let refused = Command::new(env!("CARGO_BIN_EXE_ripple"))
            .args([
                "plan",
                "landing.orders",
                "--from",
                "2026-01-10",
                "--to",
                "2026-01-12",
                "--as-of",
                "2026-03-01",
                "--format",
                "shell",
                "--executor",
                "airflow2",
                "--project",
            ])
            .arg(dir.path())
            .output()
            .unwrap();
        assert_eq!(refused.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&refused.stderr).contains("writes production"));
        let doc: serde_json::Value = serde_json::from_str(&plan_of("json")).unwrap();
        let tasks = doc["tasks"].as_array().unwrap();
        assert_eq!(tasks.len(), 4, "two batches of two datasets");
        for s in scripts(&doc, "setup") {
            db.run(&s).unwrap();
        }
        let script_of = |t: &serde_json::Value| -> String {
            t["commands"]["sql"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| format!("{};", s.as_str().unwrap()))
                .collect::<Vec<_>>()
                .join("\n")
        };
        // Both batches of a dataset at once where the engine has concurrent
        // sessions (PostgreSQL); one after the other on DuckDB's single file.
        for dataset in ["table.raw.orders", "table.mart.daily"] {
            let mine: Vec<String> = tasks
                .iter()
                .filter(|t| t["dataset"] == dataset)
                .map(script_of)
                .collect();
            match &db {
                Db::Pg(_) => std::thread::scope(|s| {
                    let handles: Vec<_> = mine.iter().map(|m| s.spawn(|| db.run(m))).collect();
                    for h in handles {
                        h.join().unwrap().unwrap();
                    }
                }),
                Db::Duck(_) => {
                    for m in &mine {
                        db.run(m).unwrap();
                    }
                }
            }
        }
        for t in tasks {
            for v in t["validations"].as_array().unwrap() {
                let got = db.run(v["sql"].as_str().unwrap()).unwrap();
                assert!(got == "t" || got == "true", "{}: {got}", v["sql"]);
            }
        }
        assert_eq!(airflow_dump(&db), before, "production before the swap");
        for s in scripts(&doc, "swap_scripts") {
            db.run(&s).unwrap();
        }
        assert_eq!(airflow_dump(&db), expected, "{}", db.dialect());
        // The shell plan, run again, converges.
        let (code, stderr) = run_shell(dir.path(), &plan_of("shell"), &db.command(), &[]);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(airflow_dump(&db), expected);
    }
}

/// Copies the folder `from` to `to`, recursively.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn a_quoted_mixed_case_table_is_restated_and_its_lower_case_namesake_is_not() {
    // PostgreSQL keeps `mart."Orders"` and `mart.orders` apart; ripple once
    // folded the first into the second, so the plan's shadow and swap named
    // another table than the job wrote.
    let Some(db) = require(postgres(), "PostgreSQL").map(Db::Pg) else {
        return;
    };
    let upper = "drop table if exists mart.\"Orders\";\ncreate table mart.\"Orders\" as select order_id, cast(ordered_at as date) as order_date, amount from raw.orders;\n";
    let sum = "drop table if exists mart.by_day;\ncreate table mart.by_day as select order_date, sum(amount) as amount from mart.\"Orders\" group by 1;\n";
    db.run_file(&raw_orders(true)).unwrap();
    db.run_file(upper).unwrap();
    db.run_file(sum).unwrap();
    // Someone else's table of the same name in lower case.
    db.run_file("create table mart.orders as select 42 as untouched;")
        .unwrap();
    fix(&db);
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("jobs")).unwrap();
    std::fs::write(dir.path().join("jobs/upper.sql"), upper).unwrap();
    std::fs::write(dir.path().join("jobs/by_day.sql"), sum).unwrap();
    std::fs::write(
        dir.path().join("ripple.yml"),
        "dialect: postgres\nmodels: [jobs]\ndatasets:\n  raw.orders: { grain: day, start: 2026-01-01 }\n",
    )
    .unwrap();
    let script = plan(dir.path(), "shell");
    let (code, stderr) = run_shell(dir.path(), &script, &db.command(), &[]);
    assert_eq!(code, 0, "{stderr}");
    // Restated: the bad days are fixed in "Orders" and in what reads it.
    let bad = db
        .run("select count(*) from mart.\"Orders\" where amount > 1000")
        .unwrap();
    assert_eq!(bad, "0");
    let day = db
        .run("select amount from mart.by_day where order_date = '2026-01-11'")
        .unwrap();
    let expected = db
        .run("select sum(amount) from raw.orders where cast(ordered_at as date) = '2026-01-11'")
        .unwrap();
    assert_eq!(day, expected);
    assert_eq!(db.run("select * from mart.orders").unwrap(), "42");
    assert!(leftovers(&db).is_empty(), "{:?}", leftovers(&db));
}

/// Model names as a pull request may bring them: selector syntax (`+`,
/// `@`, a leading number, the project's own name), shell and quoting
/// characters. Whitespace, `,` and glob characters get no command at all.
fn hostile_model_name() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    prop_oneof![
        "[a-z]{1,6}\\+[0-9]?",
        "@[a-z]{1,6}",
        "[0-9]\\+[a-z]{1,6}",
        "[a-z]{1,4}[-$;&|!~^%=:+@]{1,3}[a-z]{0,4}",
    ]
}

/// The plan's dbt `--select` for each restated model, by model name.
fn dbt_selectors(plan: &serde_json::Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for t in plan["tasks"].as_array().unwrap() {
        let Some(cmd) = t["commands"]["dbt"].as_str() else {
            continue;
        };
        let words = shell_words(cmd);
        let at = words.iter().position(|w| w == "--select").unwrap();
        let name = t["dataset"].as_str().unwrap().trim_start_matches("model.");
        out.insert(name.to_string(), words[at + 1].clone());
    }
    out
}

/// A shell line's words, as `bash` would split them (single quotes only:
/// what ripple writes).
fn shell_words(line: &str) -> Vec<String> {
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("printf '%s\\0' {line}"))
        .output()
        .unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .split('\0')
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn a_dbt_selector_addresses_exactly_the_planned_model_whatever_its_name() {
    use proptest::test_runner::{Config, TestRunner};
    let Some(dbt) = require(engines::dbt(), "dbt (dbt-duckdb)") else {
        return;
    };
    let mut runner = TestRunner::new(Config {
        cases: 4,
        failure_persistence: None,
        ..Config::default()
    });
    let names = proptest::collection::btree_set(hostile_model_name(), 3);
    let result = runner.run(&names, |mut names| {
        // Always the two a bare name gets wrong: a child selector of a
        // production model, and the project's own name (all of it).
        names.extend(["stg_orders+".to_string(), "backfill_dbt".to_string()]);
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        temp_project::copy_tree(Path::new("fixtures/backfill_dbt"), &root);
        let model = |n: &str| {
            std::fs::write(
                root.join("models").join(format!("{n}.sql")),
                "{{ config(materialized='table') }}\nselect * from {{ ref('stg_orders') }}\n",
            )
            .unwrap();
        };
        for n in &names {
            model(n);
        }
        let plan = || {
            Command::new(env!("CARGO_BIN_EXE_ripple"))
                .args([
                    "plan",
                    "raw.orders",
                    "--from",
                    "2026-01-10",
                    "--to",
                    "2026-01-12",
                ])
                .args([
                    "--as-of",
                    "2026-02-01",
                    "--format",
                    "json",
                    "--no-cache",
                    "--project",
                ])
                .arg(&root)
                .output()
                .unwrap()
        };
        // What dbt splits on gets no command: the plan is refused, naming
        // the model and what to do.
        for n in ["a b", "x,y"] {
            model(n);
            let out = plan();
            let err = String::from_utf8_lossy(&out.stderr);
            proptest::prop_assert_eq!(out.status.code(), Some(2), "{}", err);
            proptest::prop_assert!(
                err.contains(&format!("`{n}`")) && err.contains("rename the file"),
                "{}",
                err
            );
            // dbt itself refuses a project with a space in a model's name.
            std::fs::remove_file(root.join("models").join(format!("{n}.sql"))).unwrap();
        }
        // A quote, which dbt's adapters write unescaped into their own
        // SQL: refused up front, not failed half-way through dbt's steps.
        model("o'brien");
        let out = plan();
        let err = String::from_utf8_lossy(&out.stderr);
        proptest::prop_assert_eq!(out.status.code(), Some(2), "{}", err);
        proptest::prop_assert!(
            err.contains("`o'brien`") && err.contains("holds `'`"),
            "{}",
            err
        );
        std::fs::remove_file(root.join("models/o'brien.sql")).unwrap();
        let out = plan();
        proptest::prop_assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let selectors = dbt_selectors(&plan);
        for n in &names {
            let select = selectors.get(n.as_str()).expect("a command for each model");
            let listed = Command::new(&dbt)
                .current_dir(&root)
                .env("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
                .env("RIPPLE_DUCKDB_PATH", dir.path().join("w.duckdb"))
                .args([
                    "ls",
                    "--profiles-dir",
                    ".",
                    "--resource-type",
                    "model",
                    "-q",
                ])
                .args(["--output", "name", "--select", select])
                .output()
                .unwrap();
            let names_listed: Vec<String> = String::from_utf8_lossy(&listed.stdout)
                .lines()
                .map(str::to_string)
                .collect();
            proptest::prop_assert_eq!(
                &names_listed,
                &vec![n.clone()],
                "`--select {}` lists {:?} (dbt said: {})",
                select,
                names_listed,
                String::from_utf8_lossy(&listed.stderr)
            );
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// Runs `airflow dags test ripple_backfill` with `python`'s Airflow on the
/// DAG file in `dags/` under `home`, its `warehouse` connection to `db`:
/// the run's output, and whether the run ended successful.
/// `airflow ...` run by `python` in `home`, with the warehouse `conn`.
fn airflow_command(python: &Path, home: &Path, conn: &str, args: &[&str]) -> Command {
    let mut c = Command::new(python);
    c.args(["-m", "airflow"])
        .args(args)
        .env("AIRFLOW_HOME", home.join("airflow"))
        .env("AIRFLOW__CORE__DAGBAG_IMPORT_TIMEOUT", "600")
        .env("AIRFLOW__CORE__DAGS_FOLDER", home.join("dags"))
        .env("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
        .env("AIRFLOW_CONN_WAREHOUSE", conn)
        .env("PYTHONWARNINGS", "ignore");
    c
}

fn airflow_dags_test(python: &Path, home: &Path, conn: &str) -> (String, bool) {
    let airflow = |args: &[&str]| {
        let out = airflow_command(python, home, conn, args).output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (text, out.status.success())
    };
    if !home.join("airflow").join("airflow.db").exists() {
        let (text, ok) = airflow(&["db", "migrate"]);
        assert!(ok, "airflow db migrate: {text}");
    }
    let (text, ok) = airflow(&["dags", "test", "ripple_backfill", "2026-03-01"]);
    // Airflow 3 says `state=success`, Airflow 2 `Marking run ... successful`.
    let succeeded = ok
        && (text.contains("state=success")
            || text.contains("successful")
            || text.contains("DagRunState.SUCCESS"))
        && !text.contains("state=failed");
    (text, succeeded)
}

/// What Airflow 2.10 renders for a scheduled run of a `@daily` DAG, task
/// by task, read from its own code (a DagRun made in memory, each task's
/// template context, `render_template_fields`): the oracle for the SQL a
/// plan renders for each run. `prev_ds` was once the fixed run's in every
/// run, and `macros.ds_format` returned its input.
#[test]
fn airflow_renders_a_runs_templates_as_ripple_does() {
    let Some(python) = require(engines::airflow2_python(), "Airflow 2") else {
        return;
    };
    let templates = [
        "{{ ds }}|{{ ds_nodash }}|{{ ts }}|{{ ts_nodash }}|{{ ts_nodash_with_tz }}",
        "{{ data_interval_start }}|{{ data_interval_end }}|{{ logical_date }}|{{ execution_date }}",
        "{{ prev_ds }}|{{ next_ds }}|{{ prev_ds_nodash }}|{{ next_ds_nodash }}|{{ yesterday_ds }}|{{ yesterday_ds_nodash }}|{{ tomorrow_ds }}|{{ tomorrow_ds_nodash }}",
        "{{ prev_execution_date }}|{{ next_execution_date }}",
        "{{ macros.ds_add(ds, -3) }}|{{ macros.ds_add(ds, 40) }}|{{ macros.ds_format(ds, '%Y-%m-%d', '%d/%m/%Y') }}|{{ macros.ds_format(ds_nodash, '%Y%m%d', '%Y-%m') }}",
        "{{ logical_date.year }}|{{ data_interval_end.month }}|{{ data_interval_start.day }}|{{ logical_date.strftime('%Y%m%d') }}|{{ data_interval_end.isoformat() }}",
        "delete from {{ params.schema }}.t where d > '{{ prev_ds }}' and d <= '{{ ds }}'",
    ];
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("dags")).unwrap();
    let tasks: String = templates
        .iter()
        .enumerate()
        .map(|(i, t)| {
            format!(
                "    SQLExecuteQueryOperator(task_id='t{i}', conn_id='warehouse', params={{'schema': 'raw'}}, sql={t:?})\n"
            )
        })
        .collect();
    std::fs::write(
        dir.path().join("dags/r.py"),
        format!(
            "from datetime import datetime\nfrom airflow import DAG\nfrom airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator\nwith DAG(dag_id='render_check', schedule='@daily', start_date=datetime(2026, 1, 1), catchup=False) as dag:\n{tasks}"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("render.py"),
        r#"import sys, json
from datetime import datetime, timezone
from airflow.models import DagBag, DagRun, TaskInstance
from airflow.utils.types import DagRunType
from airflow.utils.state import DagRunState
dag = DagBag(dag_folder=sys.argv[1], include_examples=False).get_dag("render_check")
out = {}
written = {task.task_id: task.sql for task in dag.tasks}
for day in sys.argv[2:]:
    at = datetime.fromisoformat(day).replace(tzinfo=timezone.utc)
    interval = dag.infer_automated_data_interval(at)
    run = DagRun(dag_id=dag.dag_id, run_id="scheduled__" + day, run_type=DagRunType.SCHEDULED,
                 execution_date=at, data_interval=(interval.start, interval.end), state=DagRunState.RUNNING)
    run.dag = dag
    for task in dag.tasks:
        task.sql = written[task.task_id]
        ti = TaskInstance(task, run_id=run.run_id)
        ti.dag_run = run
        task.render_template_fields(ti.get_template_context())
        out[day + "/" + task.task_id] = task.sql
print(json.dumps(out))
"#,
    )
    .unwrap();
    let days = ["2026-01-10", "2026-02-28", "2026-12-31"];
    let airflow = |args: &[&str]| {
        let out = Command::new(&python)
            .args(args)
            .env("AIRFLOW_HOME", dir.path().join("airflow"))
            .env("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
            .env("PYTHONWARNINGS", "ignore")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    airflow(&["-m", "airflow", "db", "migrate"]);
    let mut args = vec![
        dir.path().join("render.py").display().to_string(),
        dir.path().join("dags").display().to_string(),
    ];
    args.extend(days.iter().map(|d| format!("{d}T00:00:00")));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let printed = airflow(&args);
    let line = printed.lines().rfind(|l| l.starts_with('{')).unwrap();
    let rendered: std::collections::BTreeMap<String, String> = serde_json::from_str(line).unwrap();
    let params = [("schema".to_string(), "raw".to_string())].into();
    for day in days {
        let start = ripple::time::TimeKey::parse(day).unwrap().start;
        let at = |h: i64| format!("{}T00:00:00", ripple::time::Grain::Day.key(h));
        for (i, template) in templates.iter().enumerate() {
            let theirs = &rendered[&format!("{day}T00:00:00/t{i}")];
            let ours = ripple::ingest::airflow::render_for_run(
                template,
                Some(&params),
                &at(start),
                &at(start + 24),
            )
            .unwrap_or_else(|e| panic!("{day} {template}: {e}"));
            assert_eq!(&ours, theirs, "{day}: {template}");
        }
    }
}

/// A task whose runs ripple cannot render as its DAG makes them is refused
/// with the reason: a DAG at 02:30 reading its data interval (ripple's run
/// of a partition starts at midnight), or a value only a running Airflow
/// has (`dag.dag_id` once rendered as nothing, and the plan ran).
#[test]
fn airflow_runs_ripple_cannot_render_as_the_dag_makes_them_are_refused() {
    let plan = |schedule: &str, expr: &str| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("dags")).unwrap();
        std::fs::write(
            dir.path().join("dags/p.py"),
            format!(
                "from datetime import datetime\nfrom airflow import DAG\nfrom airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator\nwith DAG(dag_id='p', schedule='{schedule}', start_date=datetime(2026, 1, 1)) as dag:\n    SQLExecuteQueryOperator(task_id='a', conn_id='w', sql=\"delete from mart.p1 where order_date = '{{{{ ds }}}}'; insert into mart.p1 (order_date, v) select cast(ordered_at as date), '{expr}' from raw.orders where cast(ordered_at as date) = '{{{{ ds }}}}'\")\n"
            ),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("ripple.yml"),
            "dialect: duckdb\ndatasets:\n  raw.orders: { grain: day, start: 2026-01-01, partition_column: ordered_at }\n  mart.p1: { grain: day, partition_column: order_date }\n",
        )
        .unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_ripple"))
            .args([
                "plan",
                "raw.orders",
                "--from",
                "2026-01-10",
                "--to",
                "2026-01-10",
                "--as-of",
                "2026-02-01",
                "--format",
                "json",
                "--no-cache",
                "--project",
            ])
            .arg(dir.path())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = plan("30 2 * * *", "{{ data_interval_start }}");
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("runs on `30 2 * * *`") && err.contains("`data_interval_start`"),
        "{err}"
    );
    // `ds` alone is the same day at 02:30 as at midnight.
    let (code, err) = plan("30 2 * * *", "{{ ds_nodash }}");
    assert_eq!(code, Some(0), "{err}");
    let (code, err) = plan("@daily", "{{ data_interval_start }} {{ prev_ds }}");
    assert_eq!(code, Some(0), "{err}");
    for unknown in [
        "{{ dag.dag_id }}",
        "{{ run_id }}",
        "{{ logical_date.format(1) }}",
    ] {
        let (code, err) = plan("@daily", unknown);
        assert_eq!(code, Some(2), "{unknown}: {err}");
        assert!(err.contains("Airflow task p.a"), "{unknown}: {err}");
    }
}

/// The generated DAG, run by Airflow itself (3, and 2.10) against
/// PostgreSQL: production equals the from-scratch recompute, row for row;
/// a failing validation stops the run before the swap with production as
/// it was, and the run after the fix converges.
#[test]
fn the_airflow_dag_runs_in_airflow_on_postgres() {
    let Some(pg) = require(postgres(), "PostgreSQL") else {
        return;
    };
    let conn = pg.airflow_conn();
    let db = Db::Pg(pg);
    let pythons = [
        (engines::airflow_python(), "Airflow 3"),
        (engines::airflow2_python(), "Airflow 2"),
    ];
    let dir = tempfile::tempdir().unwrap();
    airflow_project(&db, &dir.path().join("project"), false);
    let expected = {
        let good = Db::Pg(postgres().unwrap());
        airflow_production(&good, &dir.path().join("project"), false);
        airflow_dump(&good)
    };
    let fix = "update landing.orders set amount = amount / 100 where ordered_at >= timestamp '2026-01-10 00:00:00' and ordered_at < timestamp '2026-01-13 00:00:00'";
    let dag = || {
        let out = Command::new(env!("CARGO_BIN_EXE_ripple"))
            .args([
                "plan",
                "landing.orders",
                "--from",
                "2026-01-10",
                "--to",
                "2026-01-12",
                "--as-of",
                "2026-03-01",
                "--format",
                "airflow-dag",
                "--executor",
                "sql",
                "--project",
            ])
            .arg(dir.path().join("project"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    for (n, (python, name)) in pythons.into_iter().enumerate() {
        let Some(python) = require(python, name) else {
            continue;
        };
        // Production as it was before the fix, bad rows and all.
        db.run("drop schema if exists landing cascade; drop schema if exists raw cascade; drop schema if exists mart cascade; drop schema if exists ops cascade")
            .unwrap();
        airflow_production(&db, &dir.path().join("project"), true);
        db.run(fix).unwrap();
        let before = airflow_dump(&db);
        assert_ne!(before, expected);
        // What production's tables are: the plan keeps fingerprints, which
        // the summary reads its rows from.
        describe(&db, &dir.path().join("project"));
        let home = dir.path().join(format!("home{n}"));
        std::fs::create_dir_all(home.join("dags")).unwrap();
        std::fs::write(home.join("dags/plan.py"), dag()).unwrap();
        if n == 0 {
            // A day the fix lost (its rows gone from landing): the row
            // checks fail, the swap never runs, production is as it was.
            let keep = "create table landing.kept as select * from landing.orders where cast(ordered_at as date) = '2026-01-11'; delete from landing.orders where cast(ordered_at as date) = '2026-01-11'";
            db.run(keep).unwrap();
            let (text, ok) = airflow_dags_test(&python, &home, &conn);
            assert!(!ok, "{name}: the run passed a failing validation:\n{text}");
            // The failed check logs its detail query's answer: the day.
            assert!(
                text.contains("its detail query says") && text.contains("2026-01-11"),
                "{name}: {text}"
            );
            // The summary says which checks failed, and that nothing swapped.
            let line = summary_line(&text, "raw.orders");
            assert!(
                !line.contains(" 0 failed") && line.contains("not swapped: production unchanged"),
                "{name}: {line}"
            );
            // What reads the failed batches waits for their checks: not run.
            let down = summary_line(&text, "mart.daily");
            assert!(!down.contains(" 0 not run"), "{name}: {down}");
            // And the run's failure says why production is as it was.
            assert!(
                text.contains("the backfill did not finish for")
                    && text.contains("production unchanged: the swap did not run"),
                "{name}: {text}"
            );
            assert_eq!(airflow_dump(&db), before, "{name}: production changed");
            // Fixed, run again: the setup starts over and the run converges.
            db.run(
                "insert into landing.orders select * from landing.kept; drop table landing.kept",
            )
            .unwrap();
        }
        let (text, ok) = airflow_dags_test(&python, &home, &conn);
        let tail: String = text
            .chars()
            .rev()
            .take(6000)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        assert!(ok, "{name}: {tail}");
        assert_eq!(airflow_dump(&db), expected, "{name}");
        assert!(leftovers(&db).is_empty(), "{name}: {:?}", leftovers(&db));
        // The summary's rows are the engine's: the restated days before the
        // run and after it, and the days whose rows changed.
        let count = |dump: &str| {
            dump.lines()
                .filter(|l| ("2026-01-10".."2026-01-13").contains(&l.get(..10).unwrap_or("")))
                .count()
        };
        let changed = (10..13)
            .filter(|d| {
                let day = format!("2026-01-{d}");
                let rows = |dump: &str| {
                    dump.lines()
                        .filter(|l| l.starts_with(&day))
                        .map(str::to_string)
                        .collect::<Vec<_>>()
                };
                rows(&before.1) != rows(&expected.1)
            })
            .count();
        let line = summary_line(&text, "mart.daily");
        assert!(
            line.contains("3 partition(s) (2026-01-10..2026-01-11, 2026-01-12) in 2 batch(es)")
                && line.contains("0 failed, 0 not run")
                && line.contains(&format!(
                    "rows {} before, {} after, {changed} partition(s) changed",
                    count(&before.1),
                    count(&expected.1)
                )),
            "{name}: {line}"
        );
    }
}

/// The summary task's line for the dataset whose id ends with `dataset`.
fn summary_line(log: &str, dataset: &str) -> String {
    log.lines()
        .find(|l| l.contains("ripple summary:") && l.contains(&format!("{dataset}:")))
        .unwrap_or_else(|| panic!("no summary of {dataset}: {log}"))
        .to_string()
}

/// Writes `tables.jsonl` (what `ripple tables` reads off `db`) into the
/// project and names it in its ripple.yml.
fn describe(db: &Db, project: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_ripple"))
        .args(["tables", "--project"])
        .arg(project)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = db.run(&String::from_utf8(out.stdout).unwrap()).unwrap();
    std::fs::write(project.join("tables.jsonl"), format!("{lines}\n")).unwrap();
    let yml = std::fs::read_to_string(project.join("ripple.yml")).unwrap();
    if !yml.contains("tables:") {
        std::fs::write(
            project.join("ripple.yml"),
            format!("{yml}tables: [tables.jsonl]\n"),
        )
        .unwrap();
    }
}

/// A production DAG run queued or running holds the backfill's batches
/// before they start (Airflow's own metadata, read by the DAG's sensor);
/// once it is gone, the backfill runs and converges.
#[test]
fn an_active_production_run_makes_the_airflow_backfill_wait() {
    let Some(pg) = require(postgres(), "PostgreSQL") else {
        return;
    };
    let conn = pg.airflow_conn();
    let db = Db::Pg(pg);
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    airflow_project(&db, &project, false);
    let expected = {
        let good = Db::Pg(postgres().unwrap());
        airflow_production(&good, &project, false);
        airflow_dump(&good)
    };
    let out = Command::new(env!("CARGO_BIN_EXE_ripple"))
        .args([
            "plan",
            "landing.orders",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-12",
        ])
        .args([
            "--as-of",
            "2026-03-01",
            "--format",
            "airflow-dag",
            "--executor",
            "sql",
        ])
        .arg("--project")
        .arg(&project)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dag = String::from_utf8(out.stdout).unwrap();
    // The project's own DAG is production.
    assert!(dag.contains("PRODUCTION_DAGS = [\"orders\"]"), "{dag}");
    let dag = dag.replace("POKE_SECONDS = 60", "POKE_SECONDS = 1");
    for (n, (python, name)) in [
        (engines::airflow_python(), "Airflow 3"),
        (engines::airflow2_python(), "Airflow 2"),
    ]
    .into_iter()
    .enumerate()
    {
        let Some(python) = require(python, name) else {
            continue;
        };
        db.run("drop schema if exists landing cascade; drop schema if exists raw cascade; drop schema if exists mart cascade; drop schema if exists ops cascade")
            .unwrap();
        airflow_production(&db, &project, true);
        db.run("update landing.orders set amount = amount / 100 where ordered_at >= timestamp '2026-01-10 00:00:00' and ordered_at < timestamp '2026-01-13 00:00:00'")
            .unwrap();
        let before = airflow_dump(&db);
        let home = dir.path().join(format!("home{n}"));
        std::fs::create_dir_all(home.join("dags")).unwrap();
        std::fs::write(home.join("dags/plan.py"), &dag).unwrap();
        std::fs::copy(project.join("dags/orders.py"), home.join("dags/orders.py")).unwrap();
        let run = |args: &[&str]| {
            let out = airflow_command(&python, &home, &conn, args)
                .output()
                .unwrap();
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(out.status.success(), "{name}: airflow {args:?}: {text}");
        };
        run(&["db", "migrate"]);
        run(&["dags", "reserialize"]);
        // No scheduler runs here: the triggered run stays queued.
        run(&["dags", "trigger", "orders"]);
        let log = home.join("backfill.log");
        let mut child = airflow_command(
            &python,
            &home,
            &conn,
            &["dags", "test", "ripple_backfill", "2026-03-01"],
        )
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(Stdio::from(
            std::fs::File::create(home.join("backfill.err")).unwrap(),
        ))
        .spawn()
        .unwrap();
        let said = |what: &str| {
            std::fs::read_to_string(&log)
                .unwrap_or_default()
                .contains(what)
                || std::fs::read_to_string(home.join("backfill.err"))
                    .unwrap_or_default()
                    .contains(what)
        };
        let waiting = "production DAG(s) orders running; waiting";
        let started = std::time::Instant::now();
        while !said(waiting) && started.elapsed() < std::time::Duration::from_secs(600) {
            assert!(
                child.try_wait().unwrap().is_none(),
                "{name}: the backfill ended without waiting"
            );
            std::thread::sleep(std::time::Duration::from_secs(1));
        }
        assert!(said(waiting), "{name}: never waited");
        // A few checks later, still waiting: production is as it was.
        std::thread::sleep(std::time::Duration::from_secs(5));
        assert!(
            child.try_wait().unwrap().is_none(),
            "{name}: stopped waiting"
        );
        assert_eq!(
            airflow_dump(&db),
            before,
            "{name}: production changed while waiting"
        );
        run(&["dags", "delete", "orders", "--yes"]);
        let status = child.wait().unwrap();
        let text = format!(
            "{}{}",
            std::fs::read_to_string(&log).unwrap_or_default(),
            std::fs::read_to_string(home.join("backfill.err")).unwrap_or_default()
        );
        let tail: String = text
            .chars()
            .rev()
            .take(6000)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        assert!(
            status.success() && !text.contains("state=failed"),
            "{name}: {tail}"
        );
        assert_eq!(airflow_dump(&db), expected, "{name}: {tail}");
        assert!(leftovers(&db).is_empty(), "{name}: {:?}", leftovers(&db));
    }
}
