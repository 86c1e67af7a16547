//! The real engines of `scripts/engines.sh` answer as the tests that use them
//! expect: rows go in and come back, a `begin; ... commit;` script run in one
//! invocation is all or nothing (plans swap shadow tables in that way), and
//! the dbt and Airflow venvs work. Each test skips when its engine is missing
//! (fails under CI=true): see `tests/support/engines.rs`.

#[path = "support/engines.rs"]
mod engines;

use engines::{airflow_python, dbt, duckdb, duckdb_file, postgres, require, shell_quote};
use std::process::Command;

const TABLE: &str = "create table orders (id integer primary key, name varchar not null)";
const ROWS: &str = "insert into orders values (1, 'one'), (2, 'two'), (3, 'three')";
const READ: &str = "select id, name from orders order by id";

/// A swap whose second statement fails (a duplicate key), wrapped in a
/// transaction: the first statement must not stay.
const FAILING_SWAP: &str = "begin;
delete from orders where id = 1;
insert into orders values (2, 'duplicate');
insert into orders values (4, 'four');
commit;";

/// The same without `begin`/`commit`.
const FAILING_BARE: &str = "delete from orders where id = 1;
insert into orders values (2, 'duplicate');
insert into orders values (4, 'four');";

const COUNT: &str = "select count(*) from orders";

#[test]
fn postgres_round_trip() {
    let Some(pg) = require(postgres(), "PostgreSQL") else {
        return;
    };
    pg.run(TABLE).unwrap();
    pg.run(ROWS).unwrap();
    assert_eq!(pg.run(READ).unwrap(), "1|one\n2|two\n3|three");
    assert_eq!(pg.run("select sum(id) from orders").unwrap(), "6");
    let error = pg.run("select * from no_such_table").unwrap_err();
    assert!(error.contains("no_such_table"), "{error}");
}

#[test]
fn postgres_databases_are_per_test() {
    let Some(a) = require(postgres(), "PostgreSQL") else {
        return;
    };
    let b = postgres().unwrap();
    assert_ne!(a.database(), b.database());
    a.run(TABLE).unwrap();
    b.run(TABLE).unwrap();
    let name = a.database().to_string();
    let check = postgres().unwrap();
    let exists = format!("select count(*) from pg_database where datname = '{name}'");
    assert_eq!(check.run(&exists).unwrap(), "1");
    drop(a);
    assert_eq!(check.run(&exists).unwrap(), "0");
}

#[test]
fn duckdb_round_trip() {
    let Some(duck) = require(duckdb(), "DuckDB CLI") else {
        return;
    };
    duck.run(TABLE).unwrap();
    duck.run(ROWS).unwrap();
    assert_eq!(duck.run(READ).unwrap(), "1|one\n2|two\n3|three");
    assert_eq!(duck.run("select sum(id) from orders").unwrap(), "6");
    assert!(duck.path().exists());
    let error = duck.run("select * from no_such_table").unwrap_err();
    assert!(error.contains("no_such_table"), "{error}");
}

/// One way of running SQL on an engine: the rows, or the error.
type Run<'a> = &'a dyn Fn(&str) -> Result<String, String>;

/// Runs `sql` through a shell with the engine's command prefix, as a plan
/// run by `RIPPLE_SQL="..."` would.
fn through_shell(prefix: &str, sql: &str) -> Result<String, String> {
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!("{prefix} {}", shell_quote(sql)))
        .output()
        .unwrap();
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout)
            .trim_end()
            .to_string())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

/// Fresh `orders` for one attempt at the failing swap.
fn reset(run: Run) {
    run(&format!("drop table if exists orders; {TABLE}; {ROWS};")).unwrap();
}

/// The failing swap, run every way the engine runs a script, fails and
/// leaves all three rows.
fn assert_swap_is_atomic(engine: &str, ways: &[(&str, Run)], run: Run) {
    for (way, script) in ways {
        reset(run);
        let error = script(FAILING_SWAP).expect_err("a duplicate key must fail");
        assert!(
            error.to_lowercase().contains("duplicate") || error.contains("constraint"),
            "{engine} {way}: {error}"
        );
        assert_eq!(
            run(COUNT).unwrap(),
            "3",
            "{engine} {way}: the delete stayed"
        );
        assert_eq!(
            run(READ).unwrap(),
            "1|one\n2|two\n3|three",
            "{engine} {way}"
        );
    }
}

#[test]
fn begin_commit_scripts_are_all_or_nothing() {
    if let Some(pg) = require(postgres(), "PostgreSQL") {
        let run = |sql: &str| pg.run(sql);
        let file = |sql: &str| pg.run_file(sql);
        let shell = |sql: &str| through_shell(&pg.psql_command(), sql);
        assert_swap_is_atomic(
            "psql",
            &[("-c", &run), ("-f", &file), ("shell -c", &shell)],
            &run,
        );
    }
    if let Some(duck) = require(duckdb(), "DuckDB CLI") {
        let run = |sql: &str| duck.run(sql);
        let file = |sql: &str| duck.run_file(sql);
        let shell = |sql: &str| through_shell(&duck.sql_command(), sql);
        assert_swap_is_atomic(
            "duckdb",
            &[("-c", &run), ("-f", &file), ("shell -c", &shell)],
            &run,
        );
    }
}

/// Without `begin`, only psql's `-c` (one query string, one implicit
/// transaction) keeps the delete from staying; psql's `-f` and DuckDB commit
/// each statement before the failing one. Both stop at the error: the
/// statement after it never runs.
#[test]
fn without_begin_only_psql_c_is_atomic() {
    fn after(run: Run) -> String {
        run(READ).unwrap()
    }
    if let Some(pg) = require(postgres(), "PostgreSQL") {
        let run = |sql: &str| pg.run(sql);
        reset(&run);
        pg.run(FAILING_BARE).unwrap_err();
        assert_eq!(after(&run), "1|one\n2|two\n3|three", "psql -c");
        reset(&run);
        pg.run_file(FAILING_BARE).unwrap_err();
        assert_eq!(after(&run), "2|two\n3|three", "psql -f");
    }
    if let Some(duck) = require(duckdb(), "DuckDB CLI") {
        let run = |sql: &str| duck.run(sql);
        reset(&run);
        duck.run(FAILING_BARE).unwrap_err();
        assert_eq!(after(&run), "2|two\n3|three", "duckdb -c");
        reset(&run);
        duck.run_file(FAILING_BARE).unwrap_err();
        assert_eq!(after(&run), "2|two\n3|three", "duckdb -f");
    }
}

#[test]
fn dbt_runs_a_duckdb_project() {
    let Some(dbt) = require(dbt(), "dbt") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let warehouse = dir.path().join("warehouse.duckdb");
    let files = [
        (
            "dbt_project.yml",
            "name: smoke\nversion: \"1.0\"\nprofile: smoke\nmodel-paths: [\"models\"]\n".to_string(),
        ),
        (
            "profiles.yml",
            format!(
                "smoke:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n      path: '{}'\n      threads: 1\n",
                warehouse.display()
            ),
        ),
        (
            "models/orders.sql",
            "{{ config(materialized='table') }}\nselect 1 as id, 'one' as name union all select 2, 'two'\n"
                .to_string(),
        ),
    ];
    for (file, text) in files {
        let path = dir.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let output = Command::new(&dbt)
        .args(["run", "--profiles-dir", ".", "--project-dir", "."])
        .current_dir(dir.path())
        .env("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "dbt run failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("PASS=1"), "{stdout}");
    // The table dbt built reads back through the DuckDB CLI: the two agree
    // on the file format.
    if let Some(duck) = duckdb_file(&warehouse) {
        assert_eq!(
            duck.run("select id, name from orders order by id").unwrap(),
            "1|one\n2|two"
        );
    }
}

#[test]
fn airflow_imports() {
    let Some(python) = require(airflow_python(), "Airflow") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let output = Command::new(python)
        .args(["-c", "import airflow; print(airflow.__version__)"])
        .env("AIRFLOW_HOME", home.path())
        .output()
        .unwrap();
    let version = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        version.trim().starts_with(|c: char| c.is_ascii_digit()),
        "{version}"
    );
}
