//! Backfill plans on the table shapes teams have, run on real PostgreSQL and
//! DuckDB: a dimension with an identity (a sequence on DuckDB) key that a
//! fact table references by foreign key, an upsert by a named constraint, a
//! positional insert into a table with a generated column, a materialized
//! view and a trigger (PostgreSQL), a production run landing between the
//! setup and the swap, and a referencing table outside the plan.
//!
//! Truth is the engine's: the pipeline is run from scratch on the fixed data
//! and compared row by row (by natural key: identity values depend on the
//! order production drew them). Production is checked after every statement
//! before the swap; each fault is healed and the plan run again.

#[path = "support/db.rs"]
mod db;
#[path = "support/engines.rs"]
mod engines;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use db::{Db, engines};

/// `raw.orders`: 200 orders over January 2026; the bad load of
/// 2026-01-10..2026-01-12 has amounts a hundred times too big and customer
/// codes with a stray `z`.
fn raw(db: &Db, bad: bool) {
    let (ts, series) = match db {
        Db::Pg(_) => (
            "timestamp '2026-01-01 03:00:00' + (i % 31) * interval '1 day'",
            "generate_series(1, 200) as t(i)",
        ),
        Db::Duck(_) => (
            "timestamp '2026-01-01 03:00:00' + to_days(cast(i % 31 as integer))",
            "range(1, 201) as t(i)",
        ),
    };
    db.run_file(&format!(
        "create schema if not exists raw;
create schema if not exists mart;
create schema if not exists ops;
drop table if exists raw.orders;
create table raw.orders (order_id integer, customer_code varchar, ordered_at timestamp, amount numeric(12, 2));
insert into raw.orders select i, 'c' || cast(i % 5 as varchar), {ts}, cast((i * 37) % 1000 as numeric(12, 2)) / 10 from {series};"
    ))
    .unwrap();
    if bad {
        db.run("update raw.orders set amount = amount * 100, customer_code = 'z' || customer_code where ordered_at >= '2026-01-10' and ordered_at < '2026-01-13'")
            .unwrap();
    }
}

/// The fix at the source.
fn fix(db: &Db) {
    db.run("update raw.orders set amount = amount / 100, customer_code = substr(customer_code, 2) where ordered_at >= '2026-01-10' and ordered_at < '2026-01-13'")
        .unwrap();
}

/// The project's jobs for `db`'s engine, in the order production runs them.
fn jobs(db: &Db) -> Vec<(&'static str, String)> {
    let pg = matches!(db, Db::Pg(_));
    let ddl = if pg {
        "create table if not exists mart.dim_customer (
  customer_sk bigint generated always as identity primary key,
  customer_code varchar not null unique,
  name varchar
);
create table if not exists mart.daily (
  order_date date primary key,
  orders integer not null,
  revenue numeric(12, 2),
  revenue_k numeric generated always as (revenue / 1000) stored
);
create table if not exists mart.fact_orders (
  order_id integer primary key,
  customer_sk bigint references mart.dim_customer (customer_sk),
  order_date date not null,
  amount numeric(12, 2)
);"
    } else {
        "create sequence if not exists mart.customer_seq;
create table if not exists mart.dim_customer (
  customer_sk bigint primary key default nextval('mart.customer_seq'),
  customer_code varchar not null unique,
  name varchar
);
create table if not exists mart.daily (
  order_date date primary key,
  orders integer not null,
  revenue numeric(12, 2),
  revenue_k double generated always as (revenue / 1000)
);
create table if not exists mart.fact_orders (
  order_id integer primary key,
  customer_sk bigint references mart.dim_customer (customer_sk),
  order_date date not null,
  amount numeric(12, 2)
);"
    };
    let dim = format!(
        "insert into mart.dim_customer (customer_code, name)
select distinct customer_code, 'customer ' || customer_code from raw.orders
on conflict {} do update set name = excluded.name;",
        if pg {
            "on constraint dim_customer_customer_code_key"
        } else {
            "(customer_code)"
        }
    );
    // No column list: the values go by position into the table's columns.
    let daily = if pg {
        "insert into mart.daily
select cast(ordered_at as date), count(*), sum(amount) from raw.orders group by 1
on conflict (order_date) do update set orders = excluded.orders, revenue = excluded.revenue;"
    } else {
        "insert or replace into mart.daily
select cast(ordered_at as date), count(*), sum(amount) from raw.orders group by 1;"
    };
    let fact = "insert into mart.fact_orders (order_id, customer_sk, order_date, amount)
select o.order_id, d.customer_sk, cast(o.ordered_at as date), o.amount
from raw.orders o join mart.dim_customer d on d.customer_code = o.customer_code
on conflict (order_id) do update set amount = excluded.amount, customer_sk = excluded.customer_sk;";
    let mut out = vec![
        ("00_ddl", ddl.to_string()),
        ("10_dim", dim),
        ("20_daily", daily.to_string()),
        ("30_fact", fact.to_string()),
    ];
    if pg {
        // A job that makes a materialized view, and refreshes it each run.
        out.push((
            "40_mv",
            "create materialized view if not exists mart.mv_customers as
select d.customer_code, count(*) as orders, sum(f.amount) as amount
from mart.fact_orders f join mart.dim_customer d using (customer_sk) group by 1;
refresh materialized view mart.mv_customers;"
                .to_string(),
        ));
    }
    out
}

/// What exists beside the jobs on PostgreSQL: a materialized view over
/// `mart.daily` and a trigger auditing its inserts, made by hand.
const PG_EXTRAS: &str = "create materialized view if not exists mart.mv_monthly as
select date_trunc('month', order_date) as month, sum(revenue) as revenue, sum(orders) as orders from mart.daily group by 1;
create table if not exists ops.daily_audit (order_date date, at_insert boolean);
create or replace function ops.audit_daily() returns trigger language plpgsql as $$
begin insert into ops.daily_audit values (new.order_date, true); return new; end $$;
create or replace trigger daily_audit after insert on mart.daily for each row execute function ops.audit_daily();";

/// Production: the pipeline over `raw.orders` (bad or not), with what
/// exists beside it.
fn production(db: &Db, bad: bool, extras: bool) {
    raw(db, bad);
    for (name, sql) in jobs(db) {
        db.run_file(&sql).unwrap_or_else(|e| panic!("{name}: {e}"));
        if name == "00_ddl" && extras && matches!(db, Db::Pg(_)) {
            db.run_file(PG_EXTRAS).unwrap();
        }
    }
    if extras && matches!(db, Db::Pg(_)) {
        db.run("refresh materialized view mart.mv_monthly").unwrap();
    }
}

/// Every table by natural key (identity values left out, the customer a
/// fact points at named by its code).
fn dump(db: &Db) -> BTreeMap<&'static str, String> {
    let mut out = BTreeMap::new();
    let q = |sql: &str| db.run(sql).unwrap();
    out.insert(
        "daily",
        q("select order_date, orders, revenue, revenue_k from mart.daily order by 1"),
    );
    out.insert(
        "dim",
        q("select customer_code, name from mart.dim_customer order by 1"),
    );
    out.insert(
        "fact",
        q("select f.order_id, d.customer_code, f.order_date, f.amount, (select count(*) from mart.fact_orders) from mart.fact_orders f join mart.dim_customer d using (customer_sk) order by 1"),
    );
    if matches!(db, Db::Pg(_)) {
        out.insert(
            "mv_customers",
            q("select * from mart.mv_customers order by 1"),
        );
    }
    if matches!(db, Db::Pg(_))
        && q("select count(*) from pg_matviews where matviewname = 'mv_monthly'") == "1"
    {
        out.insert("mv", q("select * from mart.mv_monthly order by 1"));
    }
    out
}

/// Everything as it is, identity values included: what "untouched" means.
fn exact(db: &Db) -> BTreeMap<&'static str, String> {
    let mut out = dump(db);
    out.insert(
        "keys",
        db.run("select customer_sk, customer_code from mart.dim_customer order by 1")
            .unwrap(),
    );
    out.insert(
        "fact_keys",
        db.run("select order_id, customer_sk from mart.fact_orders order by 1")
            .unwrap(),
    );
    out
}

/// The project folder, with `extra` appended to ripple.yml.
fn project(db: &Db, extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("jobs")).unwrap();
    for (name, sql) in jobs(db) {
        std::fs::write(dir.path().join(format!("jobs/{name}.sql")), sql).unwrap();
    }
    std::fs::write(
        dir.path().join("ripple.yml"),
        format!(
            "dialect: {}
models: [jobs]
datasets:
  raw.orders: {{ grain: day, start: 2026-01-01 }}
  mart.daily: {{ grain: day }}
  mart.dim_customer: {{ grain: none, checks: {{ row_count: false }} }}
  mart.fact_orders: {{ start: 2026-01-01, checks: {{ row_count: false }} }}
{}{extra}",
            db.dialect(),
            if matches!(db, Db::Pg(_)) {
                "  mart.mv_customers: { grain: none }\n"
            } else {
                ""
            }
        ),
    )
    .unwrap();
    dir
}

/// Writes the catalog lines of `db` (the query `ripple tables` prints, run
/// on the engine) into the project as `tables.jsonl`.
fn describe(db: &Db, dir: &Path) {
    describe_any(db, dir);
    let lines = std::fs::read_to_string(dir.join("tables.jsonl")).unwrap();
    assert!(lines.contains("\"dim_customer\""), "{lines}");
}

/// `ripple plan` for the bad days in `format`: its output, or its error.
fn plan(dir: &Path, format: &str) -> Result<String, String> {
    let out = Command::new(env!("CARGO_BIN_EXE_ripple"))
        .args([
            "plan",
            "raw.orders",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-12",
            "--as-of",
            "2026-02-01",
            "--no-cache",
            "--format",
            format,
            "--project",
        ])
        .arg(dir)
        .output()
        .unwrap();
    if out.status.success() {
        Ok(String::from_utf8(out.stdout).unwrap())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).to_string())
    }
}

fn strings(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

/// Runs the plan's setup, tasks and validations statement by statement,
/// production compared with `before` after each one.
fn up_to_the_swap(db: &Db, doc: &serde_json::Value, before: &BTreeMap<&'static str, String>) {
    let mut steps = Vec::new();
    for s in doc["setup"].as_array().unwrap() {
        steps.extend(strings(&s["sql"]));
    }
    for t in doc["tasks"].as_array().unwrap() {
        steps.extend(strings(&t["commands"]["sql"]));
    }
    for statement in steps {
        if statement == "commit" || statement.starts_with("begin") {
            continue;
        }
        db.run(&statement)
            .unwrap_or_else(|e| panic!("{}: {statement}: {e}", db.dialect()));
        assert_eq!(&exact(db), before, "production changed by: {statement}");
    }
    for t in doc["tasks"].as_array().unwrap() {
        for v in t["validations"].as_array().unwrap() {
            let got = db.run(v["sql"].as_str().unwrap()).unwrap();
            assert!(got == "t" || got == "true", "{}: {}", t["id"], v["sql"]);
        }
    }
}

/// The swap scripts, each run whole; the first error, if any.
fn swap(db: &Db, doc: &serde_json::Value) -> Result<(), String> {
    for script in doc["swap_scripts"].as_array().unwrap() {
        let sql = strings(script)
            .iter()
            .map(|s| format!("{s};"))
            .collect::<Vec<_>>()
            .join("\n");
        db.run_file(&sql)?;
    }
    Ok(())
}

fn cleanup(db: &Db, doc: &serde_json::Value) {
    for s in strings(&doc["cleanup"]) {
        db.run(&s).unwrap();
    }
    let left = db
        .run("select table_schema || '.' || table_name from information_schema.tables where table_name like '%\\_\\_backfill%' escape '\\'")
        .unwrap();
    assert_eq!(left, "", "shadows left behind");
}

/// A bad production fixed at the source, and the recompute to compare with.
fn broken(make: fn() -> Option<Db>, extras: bool) -> Option<(Db, BTreeMap<&'static str, String>)> {
    let db = make()?;
    production(&db, true, extras);
    fix(&db);
    let truth = make().unwrap();
    production(&truth, false, extras);
    Some((db, dump(&truth)))
}

/// The identity value of each customer code, for codes that survive.
fn keys(db: &Db) -> BTreeMap<String, String> {
    db.run("select customer_code, customer_sk from mart.dim_customer where customer_code not like 'z%'")
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once('|').map(|(a, b)| (a.to_string(), b.to_string())))
        .collect()
}

#[test]
fn keys_identities_foreign_keys_and_generated_columns_restate_to_the_recompute() {
    for make in engines() {
        // Facts from the catalog, then from the project's own DDL alone.
        for catalog in [true, false] {
            let Some((db, expected)) = broken(make, catalog) else {
                continue;
            };
            let dir = project(
                &db,
                if catalog {
                    "tables: [tables.jsonl]\n"
                } else {
                    ""
                },
            );
            if catalog {
                describe(&db, dir.path());
            }
            let before = exact(&db);
            let kept = keys(&db);
            let doc: serde_json::Value =
                serde_json::from_str(&plan(dir.path(), "json").unwrap()).unwrap();
            if catalog && matches!(db, Db::Pg(_)) {
                let warnings = doc["warnings"].to_string();
                assert!(
                    warnings.contains("triggers the swap fires")
                        && warnings.contains("daily_audit"),
                    "{warnings}"
                );
            }
            up_to_the_swap(&db, &doc, &before);
            swap(&db, &doc).unwrap_or_else(|e| panic!("{}: {e}", db.dialect()));
            assert_eq!(dump(&db), expected, "{} catalog={catalog}", db.dialect());
            // Customers production knew keep the identity values facts point at.
            assert_eq!(keys(&db), kept, "{}", db.dialect());
            cleanup(&db, &doc);
            // Production's next run draws keys past every one the swap wrote.
            db.run_file(
                "insert into raw.orders values (9999, 'c9', timestamp '2026-01-31 05:00:00', 1);",
            )
            .unwrap();
            for (name, sql) in jobs(&db) {
                db.run_file(&sql)
                    .unwrap_or_else(|e| panic!("{} {name} after the plan: {e}", db.dialect()));
            }
        }
    }
}

#[test]
fn a_production_write_between_setup_and_swap_stops_the_swap_and_a_rerun_converges() {
    for make in engines() {
        let Some((db, expected)) = broken(make, false) else {
            continue;
        };
        let dir = project(&db, "");
        let doc: serde_json::Value =
            serde_json::from_str(&plan(dir.path(), "json").unwrap()).unwrap();
        up_to_the_swap(&db, &doc, &exact(&db));
        // The daily run lands: it rewrites a restated day.
        db.run("update mart.daily set orders = orders + 1 where order_date = '2026-01-11'")
            .unwrap();
        let written = exact(&db);
        let err = swap(&db, &doc).unwrap_err();
        assert!(
            err.contains("production `mart.daily` changed in partition 2026-01-11"),
            "{}: {err}",
            db.dialect()
        );
        assert_eq!(exact(&db), written, "the swap changed nothing");
        // The same plan, run again from its setup, converges.
        let doc: serde_json::Value =
            serde_json::from_str(&plan(dir.path(), "json").unwrap()).unwrap();
        up_to_the_swap(&db, &doc, &written);
        swap(&db, &doc).unwrap();
        assert_eq!(dump(&db), expected, "{}", db.dialect());
        cleanup(&db, &doc);
    }
}

#[test]
fn a_row_still_referenced_from_outside_the_plan_is_never_deleted() {
    for make in engines() {
        let Some((db, expected)) = broken(make, false) else {
            continue;
        };
        // Notes on customers, kept by hand: one on a code the fix removes.
        // (DuckDB has no cascade, nor keys across schemas.)
        let (notes_table, cascade) = if matches!(db, Db::Pg(_)) {
            ("ops.notes", " on delete cascade")
        } else {
            ("mart.notes", "")
        };
        db.run_file(&format!(
            "create table {notes_table} (note varchar, customer_sk bigint references mart.dim_customer (customer_sk){cascade});
insert into {notes_table} select 'bad', customer_sk from mart.dim_customer where customer_code = 'zc1';
insert into {notes_table} select 'good', customer_sk from mart.dim_customer where customer_code = 'c2';"
        ))
        .unwrap();
        let dir = project(&db, "tables: [tables.jsonl]\n");
        describe(&db, dir.path());
        let doc: serde_json::Value =
            serde_json::from_str(&plan(dir.path(), "json").unwrap()).unwrap();
        let before = exact(&db);
        let notes = || {
            db.run(&format!(
                "select note, customer_sk from {notes_table} order by 1"
            ))
            .unwrap()
        };
        let noted = notes();
        up_to_the_swap(&db, &doc, &before);
        let err = swap(&db, &doc).unwrap_err();
        assert!(
            err.contains(&format!("`{notes_table}` still references it")),
            "{}: {err}",
            db.dialect()
        );
        assert_eq!(notes(), noted, "no cascade fired");
        if matches!(db, Db::Pg(_)) {
            assert_eq!(exact(&db), before, "the one transaction rolled back");
        }
        // Healed: the note on the bad code goes; the plan is run again.
        db.run(&format!("delete from {notes_table} where note = 'bad'"))
            .unwrap();
        let doc: serde_json::Value =
            serde_json::from_str(&plan(dir.path(), "json").unwrap()).unwrap();
        let now = exact(&db);
        up_to_the_swap(&db, &doc, &now);
        swap(&db, &doc).unwrap();
        assert_eq!(dump(&db), expected, "{}", db.dialect());
        assert_eq!(
            notes(),
            noted
                .lines()
                .filter(|l| l.starts_with("good"))
                .collect::<Vec<_>>()
                .join("\n")
        );
        cleanup(&db, &doc);
    }
}

#[test]
fn a_trigger_or_materialized_view_nothing_describes_stops_the_setup() {
    let Some(db) = engines::require(engines::postgres(), "PostgreSQL").map(Db::Pg) else {
        return;
    };
    production(&db, true, true);
    fix(&db);
    let before = exact(&db);
    // The project's DDL says nothing of the trigger or the view over it.
    let dir = project(&db, "");
    let doc: serde_json::Value = serde_json::from_str(&plan(dir.path(), "json").unwrap()).unwrap();
    let setup = doc["setup"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["dataset"] == "table.mart.daily")
        .unwrap();
    let sql = strings(&setup["sql"])
        .iter()
        .map(|s| format!("{s};"))
        .collect::<Vec<_>>()
        .join("\n");
    let err = db.run_file(&sql).unwrap_err();
    assert!(
        err.contains("mart.daily is not the table the plan was written for")
            && err.contains("matviews: found mart.mv_monthly")
            && err.contains("triggers: found daily_audit"),
        "{err}"
    );
    assert_eq!(exact(&db), before);
    assert_eq!(
        db.run("select count(*) from information_schema.tables where table_name like 'daily\\_\\_backfill%'")
            .unwrap(),
        "0",
        "the setup's transaction made nothing"
    );
}

#[test]
fn quoted_namesakes_are_two_tables_with_two_shadows() {
    let Some(db) = engines::require(engines::postgres(), "PostgreSQL").map(Db::Pg) else {
        return;
    };
    raw(&db, true);
    let upper = "create table if not exists mart.\"Daily\" (order_date date, n integer);\ndelete from mart.\"Daily\";\ninsert into mart.\"Daily\" select cast(ordered_at as date), count(*) from raw.orders group by 1;";
    let lower = "create table if not exists mart.daily (order_date date, revenue numeric(12, 2));\ndelete from mart.daily;\ninsert into mart.daily select cast(ordered_at as date), sum(amount) from raw.orders group by 1;";
    db.run_file(upper).unwrap();
    db.run_file(lower).unwrap();
    fix(&db);
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("jobs")).unwrap();
    std::fs::write(dir.path().join("jobs/upper.sql"), upper).unwrap();
    std::fs::write(dir.path().join("jobs/lower.sql"), lower).unwrap();
    std::fs::write(
        dir.path().join("ripple.yml"),
        "dialect: postgres\nmodels: [jobs]\ndatasets:\n  raw.orders: { grain: day, start: 2026-01-01 }\n",
    )
    .unwrap();
    let doc: serde_json::Value = serde_json::from_str(&plan(dir.path(), "json").unwrap()).unwrap();
    let shadows: Vec<&str> = doc["setup"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["shadow"].as_str().unwrap())
        .collect();
    assert_eq!(shadows.len(), 2, "{shadows:?}");
    assert_ne!(shadows[0], shadows[1]);
    for s in doc["setup"].as_array().unwrap() {
        for q in strings(&s["sql"]) {
            db.run(&q).unwrap();
        }
    }
    for t in doc["tasks"].as_array().unwrap() {
        for q in strings(&t["commands"]["sql"]) {
            db.run(&q).unwrap();
        }
    }
    swap(&db, &doc).unwrap();
    let truth = db
        .run("select cast(ordered_at as date), count(*), sum(amount) from raw.orders group by 1 order by 1")
        .unwrap();
    let got = db
        .run("select u.order_date, u.n, l.revenue from mart.\"Daily\" u join mart.daily l using (order_date) order by 1")
        .unwrap();
    assert_eq!(got, truth);
    cleanup(&db, &doc);
}

/// A small pipeline found by a trial on pipelines ripple's authors did not
/// write: `setup` (tables, views, production's raw rows), its `jobs` in
/// production order, the `fix` at the source, and the queries compared.
struct Case {
    setup: &'static str,
    jobs: &'static [(&'static str, &'static str)],
    yml: &'static str,
    fix: &'static str,
    /// Run after the jobs, in production and in the recompute alike.
    after: &'static str,
    changed: &'static str,
    day: &'static str,
    dumps: &'static [&'static str],
}

impl Case {
    /// Production run on the bad rows and fixed at the source; the project
    /// described from its catalog.
    fn production(&self, db: &Db) -> tempfile::TempDir {
        db.run_file(self.setup).unwrap();
        for (_, sql) in self.jobs {
            db.run_file(sql).unwrap();
        }
        if !self.after.is_empty() {
            db.run_file(self.after).unwrap();
        }
        db.run_file(self.fix).unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("jobs")).unwrap();
        for (name, sql) in self.jobs {
            std::fs::write(dir.path().join(format!("jobs/{name}.sql")), sql).unwrap();
        }
        std::fs::write(
            dir.path().join("ripple.yml"),
            format!(
                "dialect: {}\nmodels: [jobs]\ntables: [tables.jsonl]\n{}",
                db.dialect(),
                self.yml
            ),
        )
        .unwrap();
        describe_any(db, dir.path());
        dir
    }

    /// The same pipeline from scratch on the fixed rows.
    fn recompute(&self, make: fn() -> Option<Db>) -> Vec<String> {
        let db = make().unwrap();
        db.run_file(self.setup).unwrap();
        db.run_file(self.fix).unwrap();
        for (_, sql) in self.jobs {
            db.run_file(sql).unwrap();
        }
        if !self.after.is_empty() {
            db.run_file(self.after).unwrap();
        }
        self.dump(&db)
    }

    fn dump(&self, db: &Db) -> Vec<String> {
        self.dumps.iter().map(|q| db.run(q).unwrap()).collect()
    }

    /// `ripple plan` for the case's day, as a shell script, or its refusal.
    fn plan(&self, dir: &Path) -> Result<String, String> {
        let out = Command::new(env!("CARGO_BIN_EXE_ripple"))
            .args(["plan", self.changed, "--from", self.day, "--to", self.day])
            .args([
                "--as-of",
                "2026-03-05",
                "--no-cache",
                "--format",
                "shell",
                "--project",
            ])
            .arg(dir)
            .output()
            .unwrap();
        if out.status.success() {
            Ok(String::from_utf8(out.stdout).unwrap())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).to_string())
        }
    }
}

/// [`describe`] for any project: the catalog lines of `db`.
fn describe_any(db: &Db, dir: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_ripple"))
        .args(["tables", "--project"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(out.status.success());
    let lines = db.run(&String::from_utf8(out.stdout).unwrap()).unwrap();
    std::fs::write(dir.join("tables.jsonl"), format!("{lines}\n")).unwrap();
}

/// Runs a shell plan (with `args`) on `db`: its exit code and stderr.
fn run_plan(db: &Db, dir: &Path, script: &str, args: &[&str]) -> (i32, String) {
    let path = dir.join("plan.sh");
    std::fs::write(&path, script).unwrap();
    let out = Command::new("bash")
        .arg(&path)
        .args(args)
        .env("RIPPLE_SQL", db.command())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn a_materialized_view_over_one_is_refreshed_after_it() {
    let case = Case {
        setup: "create schema raw; create schema mart;
create table raw.sales (sale_day date not null, amount int not null);
create table mart.daily (sale_day date primary key, total int not null);
create materialized view mart.mv_weekly as select date_trunc('week', sale_day)::date as wk, sum(total) as total from mart.daily group by 1;
create materialized view mart.mv_grand as select sum(total) as total from mart.mv_weekly;
insert into raw.sales values ('2026-03-02', 10), ('2026-03-03', 999), ('2026-03-04', 30);",
        jobs: &[(
            "daily",
            "delete from mart.daily;\ninsert into mart.daily select sale_day, sum(amount) from raw.sales group by sale_day;\n",
        )],
        yml: "datasets:\n  raw.sales: { grain: day, start: 2026-03-01, partition_column: sale_day }\n",
        fix: "update raw.sales set amount = 20 where sale_day = '2026-03-03';",
        after: "refresh materialized view mart.mv_weekly; refresh materialized view mart.mv_grand;",
        changed: "raw.sales",
        day: "2026-03-03",
        dumps: &[
            "select * from mart.daily order by 1",
            "select * from mart.mv_weekly order by 1",
            "select * from mart.mv_grand",
        ],
    };
    let make = || engines::require(engines::postgres(), "PostgreSQL").map(Db::Pg);
    let Some(db) = make() else { return };
    let dir = case.production(&db);
    // Production's views were refreshed over the bad rows.
    assert_eq!(db.run("select * from mart.mv_grand").unwrap(), "1039");
    let (code, err) = run_plan(&db, dir.path(), &case.plan(dir.path()).unwrap(), &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(case.dump(&db), case.recompute(make));
}

#[test]
fn a_view_over_a_job_made_materialized_view_is_dropped_first() {
    let case = Case {
        setup: "create schema raw; create schema mart;
create table raw.tickets (opened_day date not null, team text not null);
insert into raw.tickets values ('2026-03-02','billing'), ('2026-03-03','infra');",
        jobs: &[
            (
                "01_ticket_facts",
                "create table if not exists mart.ticket_facts (opened_day date, team text);\ndelete from mart.ticket_facts;\ninsert into mart.ticket_facts select opened_day, team from raw.tickets;",
            ),
            (
                "02_mv_backlog",
                "create materialized view if not exists mart.mv_backlog as select opened_day, team, count(*) as n from mart.ticket_facts group by 1, 2;",
            ),
            (
                "03_v_backlog",
                "create or replace view mart.v_backlog as select opened_day, team, n from mart.mv_backlog;",
            ),
        ],
        yml: "datasets:\n  raw.tickets: { grain: day, start: 2026-03-01, partition_column: opened_day }\n",
        fix: "update raw.tickets set team = 'billing' where opened_day = '2026-03-03';",
        after: "",
        changed: "raw.tickets",
        day: "2026-03-03",
        dumps: &[
            "select * from mart.ticket_facts order by 1",
            "select * from mart.v_backlog order by 1",
        ],
    };
    let make = || engines::require(engines::postgres(), "PostgreSQL").map(Db::Pg);
    let Some(db) = make() else { return };
    let dir = case.production(&db);
    let script = case.plan(dir.path()).unwrap();
    let (code, err) = run_plan(&db, dir.path(), &script, &[]);
    assert_eq!(code, 0, "{err}");
    let expected = case.recompute(make);
    assert_eq!(case.dump(&db), expected);
    // Rolling back and running again both get past the views' drops.
    let (code, err) = run_plan(&db, dir.path(), &script, &["rollback"]);
    assert_eq!(code, 0, "{err}");
    let (code, err) = run_plan(&db, dir.path(), &script, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(case.dump(&db), expected);
}

#[test]
fn a_row_whose_partition_moves_into_the_restated_days_is_not_duplicated() {
    let case = Case {
        setup: "create schema raw; create schema mart;
create table raw.hits (event_day varchar not null, session_id varchar not null);
create table mart.sessions (session_id varchar primary key, first_day varchar not null, hits integer not null);
insert into raw.hits values ('2026-03-02','s1'), ('2026-03-04','s9');",
        jobs: &[(
            "sessions",
            "merge into mart.sessions t
using (select session_id, min(event_day) as first_day, count(*) as hits from raw.hits group by session_id) s
on t.session_id = s.session_id
when matched then update set first_day = s.first_day, hits = s.hits
when not matched then insert values (s.session_id, s.first_day, s.hits);",
        )],
        // Grouped by session: a session gathers hits of any day, so it is
        // restated from its start; a session moving a day earlier leaves its
        // old partition a row short (here: empty), which the row-count and
        // the per-partition non-empty checks would flag.
        yml: "datasets:\n  raw.hits: { grain: day, start: 2026-03-01, partition_column: event_day, partition_format: text_yyyy_mm_dd }\n  mart.sessions: { partition_column: first_day, partition_format: text_yyyy_mm_dd, start: 2026-03-01, checks: { row_count: false, non_empty: false } }\n",
        // A late hit: session s9 began a day earlier than production knew.
        fix: "insert into raw.hits values ('2026-03-03','s9');",
        after: "",
        changed: "raw.hits",
        day: "2026-03-03",
        dumps: &["select * from mart.sessions order by 1"],
    };
    for make in engines() {
        let Some(db) = make() else { continue };
        let dir = case.production(&db);
        let script = case.plan(dir.path()).unwrap();
        for _ in 0..2 {
            let (code, err) = run_plan(&db, dir.path(), &script, &[]);
            assert_eq!(code, 0, "{}: {err}", db.dialect());
            assert_eq!(case.dump(&db), case.recompute(make), "{}", db.dialect());
        }
    }
}

#[test]
fn a_trigger_that_changes_rows_read_downstream_is_refused() {
    let case = Case {
        setup: "create schema raw; create schema mart;
create table raw.events (ev_day date not null, kind text not null, n int not null);
create table mart.events_clean (ev_day date not null, kind text not null, n int not null);
create function mart.norm() returns trigger language plpgsql as $$ begin new.kind := lower(trim(new.kind)); return new; end $$;
create trigger events_clean_norm before insert on mart.events_clean for each row execute function mart.norm();
create table mart.daily_kind (ev_day date not null, kind text not null, n int not null, primary key (ev_day, kind));
insert into raw.events values ('2026-03-02','Click',1), ('2026-03-03',' CLICK',999), ('2026-03-03','click',2);",
        jobs: &[
            (
                "01_clean",
                "delete from mart.events_clean;\ninsert into mart.events_clean select ev_day, kind, n from raw.events;",
            ),
            (
                "02_daily",
                "delete from mart.daily_kind;\ninsert into mart.daily_kind select ev_day, kind, sum(n) from mart.events_clean group by ev_day, kind;",
            ),
        ],
        yml: "datasets:\n  raw.events: { grain: day, start: 2026-03-01, partition_column: ev_day }\n",
        fix: "update raw.events set n = 3 where n = 999;",
        after: "",
        changed: "raw.events",
        day: "2026-03-03",
        dumps: &[],
    };
    let Some(db) = engines::require(engines::postgres(), "PostgreSQL").map(Db::Pg) else {
        return;
    };
    let dir = case.production(&db);
    let err = case.plan(dir.path()).unwrap_err();
    assert!(
        err.contains("refusing to plan `mart.events_clean`: its trigger `events_clean_norm`")
            && err.contains("`mart.daily_kind` reads"),
        "{err}"
    );
}

#[test]
fn a_search_path_set_in_a_job_names_the_tables_it_writes() {
    for make in engines() {
        let Some(db) = make() else { continue };
        let set = match db {
            Db::Pg(_) => "set search_path to mart, public;",
            Db::Duck(_) => "set schema = 'mart';",
        };
        let daily: &'static str = Box::leak(
            format!(
                "{set}
create table if not exists daily (d date, amount integer);
delete from daily;
insert into daily select d, sum(amount) from raw.orders group by d;"
            )
            .into_boxed_str(),
        );
        let jobs: &'static [(&'static str, &'static str)] = Box::leak(Box::new([
            ("01_daily", daily),
            (
                "02_weekly",
                "create table if not exists mart.weekly (w date, amount integer);
delete from mart.weekly;
insert into mart.weekly select cast(date_trunc('week', d) as date), sum(amount) from mart.daily group by 1;",
            ),
        ]));
        let case = Case {
            setup: "create schema raw; create schema mart;
create table raw.orders (d date, amount integer);
insert into raw.orders values ('2026-03-02', 1), ('2026-03-03', 900), ('2026-03-04', 3), ('2026-03-10', 4);",
            jobs,
            yml: "datasets:\n  raw.orders: { grain: day, start: 2026-03-01, partition_column: d }\n",
            fix: "update raw.orders set amount = 2 where d = '2026-03-03';",
            after: "",
            changed: "raw.orders",
            day: "2026-03-03",
            dumps: &[
                "select * from mart.daily order by 1",
                "select * from mart.weekly order by 1",
                "select count(*) from information_schema.tables where table_name like 'daily%' and table_schema <> 'mart'",
            ],
        };
        let dir = case.production(&db);
        let script = case.plan(dir.path()).unwrap();
        // Every table the plan names is qualified: the swap cannot land
        // in whatever schema a session happens to be in.
        assert!(script.contains("\"mart\".\"daily\""), "{script}");
        assert!(script.contains("\"mart\".\"weekly__backfill\""), "{script}");
        let (code, err) = run_plan(&db, dir.path(), &script, &[]);
        assert_eq!(code, 0, "{}: {err}", db.dialect());
        assert_eq!(case.dump(&db), case.recompute(make), "{}", db.dialect());
    }
}

#[test]
fn partition_keys_stored_as_integers_or_text_are_filtered_in_their_format_declared_or_read() {
    for make in engines() {
        let Some(db) = make() else { continue };
        let (day_key, month_key) = match db {
            Db::Pg(_) => (
                "cast(to_char(sale_day, 'YYYYMMDD') as integer)",
                "to_char(sale_day, 'YYYY-MM')",
            ),
            Db::Duck(_) => (
                "cast(strftime(sale_day, '%Y%m%d') as integer)",
                "strftime(sale_day, '%Y-%m')",
            ),
        };
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        let jobs: &'static [(&'static str, &'static str)] = Box::leak(Box::new([
            (
                "01_daily_k",
                leak(format!(
                    "delete from mart.daily_k;\ninsert into mart.daily_k select {day_key}, sum(amount) from raw.sales group by 1;"
                )),
            ),
            (
                "02_monthly_k",
                leak(format!(
                    "delete from mart.monthly_k;\ninsert into mart.monthly_k select {month_key}, sum(amount) from raw.sales group by 1;"
                )),
            ),
        ]));
        let case = |yml: &'static str| {
            Case {
            setup: "create schema raw; create schema mart;
create table raw.sales (sale_day date, amount integer);
create table mart.daily_k (dk integer primary key, amount integer);
create table mart.monthly_k (mk varchar primary key, amount integer);
insert into raw.sales values ('2026-02-27', 1), ('2026-03-02', 2), ('2026-03-03', 900), ('2026-03-04', 3);",
            jobs,
            yml,
            fix: "update raw.sales set amount = 5 where sale_day = '2026-03-03';",
            after: "",
            changed: "raw.sales",
            day: "2026-03-03",
            dumps: &[
                "select * from mart.daily_k order by 1",
                "select * from mart.monthly_k order by 1",
            ],
        }
        };
        // Declared: each filter is written as the column keeps its key.
        let declared = case(
            "datasets:
  raw.sales: { grain: day, start: 2026-02-01, partition_column: sale_day }
  mart.daily_k: { grain: day, partition_column: dk, partition_format: int_yyyymmdd }
  mart.monthly_k: { grain: month, partition_column: mk, partition_format: text_yyyy_mm }
",
        );
        let dir = declared.production(&db);
        let script = declared.plan(dir.path()).unwrap();
        assert!(
            script.contains("\"dk\" >= 20260303 and \"dk\" < 20260304"),
            "{script}"
        );
        // (The shell script writes a `'` as `'\''`.)
        assert!(
            script.contains(r#""mk" >= '\''2026-03'\'' and "mk" < '\''2026-04'\''"#),
            "{script}"
        );
        let (code, err) = run_plan(&db, dir.path(), &script, &[]);
        assert_eq!(code, 0, "{}: {err}", db.dialect());
        assert_eq!(
            declared.dump(&db),
            declared.recompute(make),
            "{}",
            db.dialect()
        );
        // Nothing declared downstream: the columns, their formats and the
        // month's grain are read off the SQL making them, and the plan
        // restores exactly the recompute.
        let inferred = case(
            "datasets:\n  raw.sales: { grain: day, start: 2026-02-01, partition_column: sale_day }\n",
        );
        let db2 = make().unwrap();
        let dir = inferred.production(&db2);
        let script = inferred.plan(dir.path()).unwrap();
        assert!(
            script.contains("\"dk\" >= 20260303 and \"dk\" < 20260304"),
            "{script}"
        );
        assert!(
            script.contains(r#""mk" >= '\''2026-03'\'' and "mk" < '\''2026-04'\''"#),
            "{script}"
        );
        let (code, err) = run_plan(&db2, dir.path(), &script, &[]);
        assert_eq!(code, 0, "{}: {err}", db2.dialect());
        assert_eq!(
            inferred.dump(&db2),
            inferred.recompute(make),
            "{}",
            db2.dialect()
        );
        // The column named but not its format, and the table's facts say
        // it is text: refused before anything runs, naming the setting.
        let unformatted = case(
            "datasets:\n  raw.sales: { grain: day, start: 2026-02-01, partition_column: sale_day }\n  mart.daily_k: { grain: day, partition_column: dk, partition_format: int_yyyymmdd }\n  mart.monthly_k: { grain: month, partition_column: mk }\n",
        );
        let db3 = make().unwrap();
        let dir = unformatted.production(&db3);
        let before = unformatted.dump(&db3);
        let err = unformatted.plan(dir.path()).unwrap_err();
        assert!(
            err.contains("refusing to plan `mart.monthly_k`")
                && err.contains("set `partition_format`"),
            "{}: {err}",
            db3.dialect()
        );
        assert_eq!(unformatted.dump(&db3), before, "production untouched");
    }
}

#[test]
fn a_partitioned_fact_referencing_an_identity_dimension_is_restated() {
    let case = Case {
        setup: "create schema raw; create schema mart;
create table raw.orders(d date not null, store_code text not null, amount numeric not null);
create table mart.dim_store(store_id int generated always as identity primary key, store_code text not null unique);
create table mart.fct_orders(d date not null, store_id int not null references mart.dim_store(store_id), amount numeric, primary key (d, store_id)) partition by range (d);
create table mart.fct_orders_2026_01 partition of mart.fct_orders for values from ('2026-01-01') to ('2026-02-01');
insert into raw.orders values ('2026-01-01','A',1),('2026-01-02','A',2),('2026-01-02','B',3);",
        jobs: &[
            (
                "01_dim",
                "insert into mart.dim_store (store_code) select distinct store_code from raw.orders on conflict (store_code) do nothing;",
            ),
            (
                "02_fct",
                "delete from mart.fct_orders;\ninsert into mart.fct_orders (d, store_id, amount)\nselect o.d, s.store_id, sum(o.amount) from raw.orders o join mart.dim_store s using (store_code) group by 1, 2;",
            ),
        ],
        yml: "datasets:\n  raw.orders: { grain: day, start: 2026-01-01, partition_column: d }\n  mart.dim_store: { grain: none }\n  mart.fct_orders: { grain: day, start: 2026-01-01 }\n",
        fix: "update raw.orders set amount = 20 where d = '2026-01-02' and store_code = 'A';",
        after: "",
        changed: "raw.orders",
        day: "2026-01-02",
        dumps: &[
            "select f.d, s.store_code, f.amount from mart.fct_orders f join mart.dim_store s using (store_id) order by 1, 2",
            "select store_code from mart.dim_store order by 1",
        ],
    };
    let make = || engines::require(engines::postgres(), "PostgreSQL").map(Db::Pg);
    let Some(db) = make() else { return };
    // The partition's copy of the foreign key is not a key of its own: the
    // check and the catalog lines agree, and the plan runs.
    let dir = case.production(&db);
    let (code, err) = run_plan(&db, dir.path(), &case.plan(dir.path()).unwrap(), &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(case.dump(&db), case.recompute(make));
}

#[test]
fn a_job_reading_back_the_identity_values_it_draws_is_refused() {
    let case = Case {
        setup: "create schema raw; create schema mart;
create table raw.categories(d date not null, code text not null, parent_code text);
create table mart.dim_category(cat_id int generated always as identity primary key, code text not null unique, parent_id int, first_seen date);
insert into raw.categories values ('2026-01-01','root',null),('2026-01-01','shoes','root'),('2026-01-02','boots','shoes');",
        jobs: &[(
            "dim",
            "insert into mart.dim_category (code, first_seen)
select code, min(d) from raw.categories group by code
on conflict (code) do nothing;
insert into mart.dim_category (code, first_seen, parent_id)
select c.code, min(c.d), min(p.cat_id)
from raw.categories c join mart.dim_category p on p.code = c.parent_code
group by c.code
on conflict (code) do update set parent_id = excluded.parent_id;",
        )],
        yml: "datasets:\n  raw.categories: { grain: day, start: 2026-01-01, partition_column: d }\n  mart.dim_category: { grain: none }\n",
        fix: "update raw.categories set parent_code = 'root' where code = 'boots';",
        after: "",
        changed: "raw.categories",
        day: "2026-01-02",
        dumps: &[],
    };
    let Some(db) = engines::require(engines::postgres(), "PostgreSQL").map(Db::Pg) else {
        return;
    };
    let dir = case.production(&db);
    let err = case.plan(dir.path()).unwrap_err();
    assert!(
        err.contains("refusing to plan `mart.dim_category`: its job reads the table it writes, and the table draws `cat_id`"),
        "{err}"
    );
}

/// `text` for a [`Case`], whose fields are static: a handful of cases per
/// test process, so leaking them is cheaper than owning every field.
fn lasting(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

/// A day's orders cast to dates in a database whose sessions run in Los
/// Angeles: the bad UTC day reaches the Los Angeles day before it.
const SESSION_ZONE_SETUP: &str = "create schema raw; create schema mart;
do $$ begin execute format('alter database %I set timezone = %L', current_database(), 'America/Los_Angeles'); end $$;
create table raw.orders (order_id int primary key, ordered_at timestamptz, amount numeric(12,2));
create table mart.daily (order_date date, n bigint, revenue numeric(14,2));
insert into raw.orders select i, timestamptz '2026-03-01 01:00:00+00' + (i * 3) * interval '1 hour', i
from generate_series(1, 30) i;
update raw.orders set amount = amount * 100 where (ordered_at at time zone 'UTC')::date = '2026-03-03';";

#[test]
fn a_cast_to_date_in_the_session_s_zone_is_checked_before_the_plan_runs() {
    let case = |yml: &'static str| Case {
        setup: SESSION_ZONE_SETUP,
        jobs: &[(
            "daily",
            "delete from mart.daily;\ninsert into mart.daily (order_date, n, revenue) select cast(ordered_at as date), count(*), sum(amount) from raw.orders group by 1;\n",
        )],
        yml,
        fix: "update raw.orders set amount = amount / 100 where (ordered_at at time zone 'UTC')::date = '2026-03-03';",
        after: "",
        changed: "raw.orders",
        day: "2026-03-03",
        dumps: &["select * from mart.daily order by 1"],
    };
    let make = || engines::require(engines::postgres(), "PostgreSQL").map(Db::Pg);
    // Nothing says the sessions' zone: the days are taken as UTC's, which
    // would restate Los Angeles' 3 March and leave its 2 March wrong; the
    // run stops before anything changes.
    let Some(db) = make() else { return };
    let silent = case(
        "datasets:\n  raw.orders: { grain: day, start: 2026-03-01, partition_column: ordered_at }\n  mart.daily: { grain: day, start: 2026-03-01 }\n",
    );
    let dir = silent.production(&db);
    let before = silent.dump(&db);
    let (code, err) = run_plan(&db, dir.path(), &silent.plan(dir.path()).unwrap(), &[]);
    assert_ne!(code, 0, "{err}");
    assert!(
        err.contains("the session's TimeZone is America/Los_Angeles, but the plan takes the days of `mart.daily` to be UTC's"),
        "{err}"
    );
    assert_eq!(silent.dump(&db), before);
    // The upstream's partition column not declared: the job still cuts its
    // `timestamptz` into days (the check was skipped, 2 March left wrong).
    let Some(db) = make() else { return };
    let undeclared = case(
        "datasets:\n  raw.orders: { grain: day, start: 2026-03-01 }\n  mart.daily: { grain: day, start: 2026-03-01 }\n",
    );
    let dir = undeclared.production(&db);
    let before = undeclared.dump(&db);
    let script = undeclared.plan(dir.path()).unwrap();
    let (code, err) = run_plan(&db, dir.path(), &script, &[]);
    assert_ne!(code, 0, "{err}");
    assert!(
        err.contains("the session's TimeZone is America/Los_Angeles"),
        "{err}"
    );
    assert_eq!(undeclared.dump(&db), before);
    // Said, the impact moves by the zones' offsets and the plan restates
    // exactly what a recompute gives.
    let Some(db) = make() else { return };
    let said = case(
        "datasets:\n  raw.orders: { grain: day, start: 2026-03-01, partition_column: ordered_at }\n  mart.daily: { grain: day, start: 2026-03-01, time_zone: America/Los_Angeles }\n",
    );
    let dir = said.production(&db);
    assert_ne!(said.dump(&db), said.recompute(make));
    let (code, err) = run_plan(&db, dir.path(), &said.plan(dir.path()).unwrap(), &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(said.dump(&db), said.recompute(make));
}

/// More ways a job's days depend on the session's zone, each stopped
/// before anything changes when the database runs in Los Angeles: a
/// truncation kept as an instant, a plain timestamp made an instant, a
/// zone set after the work or reset, and a domain over `timestamptz`.
#[test]
fn every_way_the_session_s_zone_cuts_days_is_checked() {
    let plain = "create schema raw; create schema mart;
do $$ begin execute format('alter database %I set timezone = %L', current_database(), 'America/Los_Angeles'); end $$;
create table raw.orders (order_id int primary key, ordered_at timestamp, amount numeric(12,2));
create table mart.daily (order_date date, n bigint, revenue numeric(14,2));
insert into raw.orders select i, timestamp '2026-03-01 01:00:00' + (i * 3) * interval '1 hour', i from generate_series(1, 30) i;
update raw.orders set amount = amount * 100 where ordered_at::date = '2026-03-03';";
    let domain = SESSION_ZONE_SETUP.replace(
        "create table raw.orders (order_id int primary key, ordered_at timestamptz,",
        "create domain raw.instant as timestamptz not null;\ncreate table raw.orders (order_id int primary key, ordered_at raw.instant,",
    );
    let instants = "create table mart.daily (order_date date, n bigint, revenue numeric(14,2));";
    let truncated = SESSION_ZONE_SETUP.replace(
        instants,
        "create table mart.daily (order_date timestamptz, n bigint, revenue numeric(14,2));",
    );
    let group = "count(*), sum(amount) from raw.orders group by 1;\n";
    let cases: Vec<(String, String, &str)> = vec![
        (
            truncated,
            format!(
                "delete from mart.daily;\ninsert into mart.daily (order_date, n, revenue) select date_trunc('day', ordered_at), {group}"
            ),
            "update raw.orders set amount = amount / 100 where (ordered_at at time zone 'UTC')::date = '2026-03-03';",
        ),
        (
            plain.to_string(),
            format!(
                "delete from mart.daily;\ninsert into mart.daily (order_date, n, revenue) select (ordered_at::timestamptz at time zone 'UTC')::date, {group}"
            ),
            "update raw.orders set amount = amount / 100 where ordered_at::date = '2026-03-03';",
        ),
        // `at time zone 'UTC'` on a plain timestamp makes an instant too,
        // which the cast then cuts in the session's zone.
        (
            plain.to_string(),
            format!(
                "delete from mart.daily;\ninsert into mart.daily (order_date, n, revenue) select (ordered_at at time zone 'UTC')::date, {group}"
            ),
            "update raw.orders set amount = amount / 100 where ordered_at::date = '2026-03-03';",
        ),
        (
            SESSION_ZONE_SETUP.to_string(),
            format!(
                "set time zone 'UTC';\nreset timezone;\ndelete from mart.daily;\ninsert into mart.daily (order_date, n, revenue) select cast(ordered_at as date), {group}"
            ),
            "update raw.orders set amount = amount / 100 where (ordered_at at time zone 'UTC')::date = '2026-03-03';",
        ),
        (
            SESSION_ZONE_SETUP.to_string(),
            format!(
                "delete from mart.daily;\ninsert into mart.daily (order_date, n, revenue) select cast(ordered_at as date), {group}set time zone 'UTC';\n"
            ),
            "update raw.orders set amount = amount / 100 where (ordered_at at time zone 'UTC')::date = '2026-03-03';",
        ),
        (
            domain,
            format!(
                "delete from mart.daily;\ninsert into mart.daily (order_date, n, revenue) select cast(ordered_at as date), {group}"
            ),
            "update raw.orders set amount = amount / 100 where (ordered_at at time zone 'UTC')::date = '2026-03-03';",
        ),
    ];
    for (setup, job, fix) in cases {
        let (setup, job) = (lasting(setup), lasting(job));
        let jobs: &'static [(&'static str, &'static str)] =
            Box::leak(vec![("daily", job)].into_boxed_slice());
        let case = Case {
            setup,
            jobs,
            yml: "datasets:\n  raw.orders: { grain: day, start: 2026-03-01, partition_column: ordered_at }\n  mart.daily: { grain: day, start: 2026-03-01, partition_column: order_date }\n",
            fix,
            after: "",
            changed: "raw.orders",
            day: "2026-03-03",
            dumps: &["select * from mart.daily order by 1"],
        };
        let Some(db) = engines::require(engines::postgres(), "PostgreSQL").map(Db::Pg) else {
            return;
        };
        let dir = case.production(&db);
        let before = case.dump(&db);
        let (code, err) = run_plan(&db, dir.path(), &case.plan(dir.path()).unwrap(), &[]);
        assert_ne!(code, 0, "{job}: {err}");
        assert!(
            err.contains("the session's TimeZone is America/Los_Angeles"),
            "{job}: {err}"
        );
        assert_eq!(case.dump(&db), before, "{job}");
    }
}

/// A job that sets its zone after deleting cuts days in that zone, not the
/// database's the run checks: refused before anything runs. Set after
/// table definitions only, it counts as first: the plan restates the job's
/// zone's days and equals a recompute.
#[test]
fn a_zone_set_after_work_is_refused_and_after_definitions_is_the_job_s() {
    let utc = SESSION_ZONE_SETUP.replace(
        "do $$ begin execute format('alter database %I set timezone = %L', current_database(), 'America/Los_Angeles'); end $$;\n",
        "",
    );
    let case = |job: String| Case {
        setup: lasting(utc.clone()),
        jobs: Box::leak(vec![("daily", lasting(job))].into_boxed_slice()),
        yml: "datasets:\n  raw.orders: { grain: day, start: 2026-03-01, partition_column: ordered_at }\n  mart.daily: { grain: day, start: 2026-03-01, partition_column: order_date }\n",
        fix: "update raw.orders set amount = amount / 100 where (ordered_at at time zone 'UTC')::date = '2026-03-03';",
        after: "",
        changed: "raw.orders",
        day: "2026-03-03",
        dumps: &["select * from mart.daily order by 1"],
    };
    let body = "insert into mart.daily (order_date, n, revenue) select cast(ordered_at as date), count(*), sum(amount) from raw.orders group by 1;\n";
    let make = || engines::require(engines::postgres(), "PostgreSQL").map(Db::Pg);
    let Some(db) = make() else { return };
    let late = case(format!(
        "delete from mart.daily;\nset time zone 'America/Los_Angeles';\n{body}"
    ));
    let dir = late.production(&db);
    let err = late.plan(dir.path()).unwrap_err();
    assert!(
        err.contains("refusing to plan `mart.daily`: its job cuts times into days in the session's zone and moves that zone")
            && err.contains("line 2: `SET TIME ZONE 'America/Los_Angeles'`"),
        "{err}"
    );
    let Some(db) = make() else { return };
    let first = case(format!(
        "create table if not exists mart.daily (order_date date, n bigint, revenue numeric(14,2));\nset time zone 'America/Los_Angeles';\ndelete from mart.daily;\n{body}"
    ));
    let dir = first.production(&db);
    assert_ne!(first.dump(&db), first.recompute(make));
    let (code, err) = run_plan(&db, dir.path(), &first.plan(dir.path()).unwrap(), &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(first.dump(&db), first.recompute(make));
}

/// A job that fills a table and then makes a view over it, and a second
/// job reading the view: the view's reader must wait for the table's task
/// (it read production's old copy through the view's shadow, exit 0).
#[test]
fn a_view_over_a_table_of_the_same_job_waits_for_that_table() {
    let case = Case {
        setup: "create schema raw; create schema mart;
create table raw.events (id int primary key, ts timestamptz, amount numeric(12,2));
create table mart.daily_cls (day date, cls int, amt numeric(14,2));
insert into raw.events select i, timestamptz '2026-03-01 00:30:00+00' + (i * 2) * interval '1 hour', i
from generate_series(1, 60) i;
update raw.events set amount = amount + 1000 where (ts at time zone 'UTC')::date = '2026-03-03';",
        jobs: &[
            (
                "a_daily",
                "delete from mart.daily_cls;
insert into mart.daily_cls (day, cls, amt) select cast(ts at time zone 'UTC' as date), id % 3, sum(amount) from raw.events group by 1, 2;
create or replace view mart.v_cls as select day, cls, amt from mart.daily_cls;",
            ),
            (
                "b_top",
                "drop table if exists mart.top;\ncreate table mart.top as select day, max(amt) as best from mart.v_cls group by day;",
            ),
        ],
        yml: "datasets:\n  raw.events: { grain: day, start: 2026-03-01, partition_column: ts }\n  mart.daily_cls: { grain: day }\n  mart.top: { grain: day, partition_column: day }\n",
        fix: "update raw.events set amount = amount - 1000 where (ts at time zone 'UTC')::date = '2026-03-03';",
        after: "",
        changed: "raw.events",
        day: "2026-03-03",
        dumps: &[
            "select * from mart.daily_cls order by 1, 2",
            "select * from mart.top order by 1",
        ],
    };
    let make = || engines::require(engines::postgres(), "PostgreSQL").map(Db::Pg);
    let Some(db) = make() else { return };
    let dir = case.production(&db);
    assert_ne!(case.dump(&db), case.recompute(make));
    let script = case.plan(dir.path()).unwrap();
    let at = |task: &str| script.find(&format!("# task {task}")).unwrap_or(usize::MAX);
    assert!(at("mart.daily_cls@") < at("mart.top@"), "{script}");
    let (code, err) = run_plan(&db, dir.path(), &script, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(case.dump(&db), case.recompute(make));
}

#[test]
fn days_of_a_time_zone_are_restated_whatever_the_session_zone() {
    let case = Case {
        setup: "create schema raw; create schema mart;
create table raw.events (ts timestamptz, v integer);
create table mart.events_clean (ts timestamptz, v integer);
create table mart.daily (d date, v integer);
insert into raw.events select t, extract(hour from t at time zone 'UTC')::int + 1
from generate_series(timestamptz '2026-03-27 00:00+00', timestamptz '2026-03-31 23:00+00', interval '1 hour') t;
update raw.events set v = v * 100
where ts >= timestamptz '2026-03-29 00:00:00+01' and ts < timestamptz '2026-03-30 00:00:00+02';",
        jobs: &[
            (
                "01_clean",
                "delete from mart.events_clean;\ninsert into mart.events_clean (ts, v) select ts, v from raw.events;",
            ),
            (
                "02_daily",
                "delete from mart.daily;\ninsert into mart.daily (d, v) select cast(ts at time zone 'Europe/Paris' as date), sum(v) from mart.events_clean group by 1;",
            ),
        ],
        // Partitions are days in Paris; 2026-03-29 has 23 hours there.
        yml: "time_zone: Europe/Paris
datasets:
  raw.events: { grain: day, start: 2026-03-27, partition_column: ts }
  mart.events_clean: { grain: day, partition_column: ts }
  mart.daily: { grain: day, partition_column: d }
",
        fix: "update raw.events set v = v / 100
where ts >= timestamptz '2026-03-29 00:00:00+01' and ts < timestamptz '2026-03-30 00:00:00+02';",
        after: "",
        changed: "raw.events",
        day: "2026-03-29",
        dumps: &[
            "select ts at time zone 'UTC', v from mart.events_clean order by 1",
            "select * from mart.daily order by 1",
        ],
    };
    let make = || engines::require(engines::postgres(), "PostgreSQL").map(Db::Pg);
    let Some(db) = make() else { return };
    // (The fix undoes the setup's damage in the recompute too.)
    let dir = case.production(&db);
    let out = Command::new(env!("CARGO_BIN_EXE_ripple"))
        .args([
            "plan",
            "raw.events",
            "--from",
            "2026-03-29",
            "--to",
            "2026-03-29",
        ])
        .args([
            "--as-of",
            "2026-04-01",
            "--no-cache",
            "--format",
            "shell",
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
    let script = String::from_utf8(out.stdout).unwrap();
    assert!(
        script.contains(r#""ts" >= '\''2026-03-29 00:00:00+01:00'\'' and "ts" < '\''2026-03-30 00:00:00+02:00'\''"#),
        "{script}"
    );
    // The plan's sessions run in New York: the filter does not move.
    let path = dir.path().join("plan.sh");
    std::fs::write(&path, &script).unwrap();
    let out = Command::new("bash")
        .arg(&path)
        .env("RIPPLE_SQL", db.command())
        .env("PGTZ", "America/New_York")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(case.dump(&db), case.recompute(make));
}

#[test]
fn a_bare_name_found_further_on_the_search_path_is_followed() {
    let case = Case {
        setup: "create schema raw; create schema stg_a; create schema mart;
create table raw.orders (id int primary key, order_day date not null, amount numeric not null);
insert into raw.orders select i, date '2026-03-01' + (i % 10), (i % 13) - 2 from generate_series(1, 300) i;
update raw.orders set amount = -amount where order_day = '2026-03-03';",
        jobs: &[
            (
                "01_summary",
                "set search_path to stg_a;\ndrop table if exists summary;\ncreate table summary as select order_day, sum(amount) as amount from raw.orders group by 1;",
            ),
            (
                // `summary` is only in stg_a, the second schema on the path.
                "02_daily",
                "set search_path to mart, stg_a;\ndrop table if exists daily;\ncreate table daily as select order_day, amount as total from summary;",
            ),
        ],
        yml: "datasets:\n  raw.orders: { grain: day, start: 2026-03-01, partition_column: order_day }\n  stg_a.summary: { grain: day, partition_column: order_day }\n  mart.daily: { grain: day, partition_column: order_day }\n",
        fix: "update raw.orders set amount = -amount where order_day = '2026-03-03';",
        after: "",
        changed: "raw.orders",
        day: "2026-03-03",
        dumps: &[
            "select * from stg_a.summary order by 1",
            "select * from mart.daily order by 1",
        ],
    };
    let make = || engines::require(engines::postgres(), "PostgreSQL").map(Db::Pg);
    let Some(db) = make() else { return };
    let dir = case.production(&db);
    let script = case.plan(dir.path()).unwrap();
    assert!(script.contains("\"mart\".\"daily__backfill\""), "{script}");
    let (code, err) = run_plan(&db, dir.path(), &script, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(case.dump(&db), case.recompute(make));
}

#[test]
fn a_name_holding_quote_tags_stays_one_name_in_the_engines_dynamic_sql() {
    // A table of unknown columns is filled through a PostgreSQL block that
    // reads them from the catalog. A name holding `$q$` once closed the
    // block's quote: `setval` ran and the insert went to `mart.a9b...`.
    let Some(db) = engines::require(engines::postgres(), "PostgreSQL").map(Db::Pg) else {
        return;
    };
    let name = r"a$q$||setval('s',9)::text||$q$b$ripple$\";
    let quoted = format!("mart.\"{name}\"");
    db.run_file(&format!(
        "drop schema if exists raw cascade; drop schema if exists mart cascade; drop sequence if exists public.s;
create schema raw; create schema mart; create sequence public.s;
create table raw.orders (d date, v int);
insert into raw.orders select date '2026-01-01' + i, i from generate_series(0, 20) i;
update raw.orders set v = v * 100 where d = '2026-01-10';
create table {quoted} (d date, v int);
insert into {quoted} select * from raw.orders;
update raw.orders set v = v / 100 where d = '2026-01-10';"
    ))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("jobs")).unwrap();
    std::fs::write(
        dir.path().join("jobs/load.sql"),
        format!("insert into {quoted} select * from raw.orders;\n"),
    )
    .unwrap();
    let yml_name = format!("mart.{name}").replace('\\', "\\\\");
    std::fs::write(
        dir.path().join("ripple.yml"),
        format!(
            "dialect: postgres\nmodels: [jobs]\ndatasets:\n  raw.orders: {{ grain: day, start: 2026-01-01, partition_column: d }}\n  \"{yml_name}\": {{ grain: day, partition_column: d }}\n"
        ),
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
        ])
        .args(["--as-of", "2026-02-01", "--no-cache", "--format", "shell"])
        .arg("--project")
        .arg(dir.path())
        .output()
        .unwrap();
    let script = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success() && script.contains("string_agg(quote_ident"),
        "{}\n{script}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (code, err) = run_plan(&db, dir.path(), &script, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        db.run("select last_value, is_called from public.s")
            .unwrap(),
        "1|f"
    );
    assert_eq!(
        db.run(&format!("select count(*), sum(v) from {quoted}"))
            .unwrap(),
        db.run("select count(*), sum(v) from raw.orders").unwrap()
    );
    assert_eq!(
        db.run("select count(*) from pg_tables where schemaname = 'mart'")
            .unwrap(),
        "1"
    );
}

/// A project whose one job appends `raw.orders` into `mart."<name>"`
/// (days by `d`), production run over a bad 2026-01-10 that the source
/// has since fixed.
fn appending_project(db: &Db, name: &str) -> tempfile::TempDir {
    let quoted = format!("mart.\"{name}\"");
    db.run_file(&format!(
        "drop schema if exists raw cascade; drop schema if exists mart cascade;
create schema raw; create schema mart;
create table raw.orders (d date, v int);
insert into raw.orders select date '2026-01-01' + i, i from generate_series(0, 20) i;
update raw.orders set v = v * 100 where d = '2026-01-10';
create table {quoted} (d date, v int);
insert into {quoted} select * from raw.orders;
update raw.orders set v = v / 100 where d = '2026-01-10';"
    ))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("jobs")).unwrap();
    std::fs::write(
        dir.path().join("jobs/load.sql"),
        format!("insert into {quoted} select * from raw.orders;\n"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("ripple.yml"),
        format!(
            "dialect: postgres\nmodels: [jobs]\ndatasets:\n  raw.orders: {{ grain: day, start: 2026-01-01, partition_column: d }}\n  mart.{name}: {{ grain: day, partition_column: d }}\n"
        ),
    )
    .unwrap();
    dir
}

fn plan_shell(dir: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ripple"))
        .args([
            "plan",
            "raw.orders",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-11",
        ])
        .args(["--as-of", "2026-02-01", "--no-cache", "--format", "shell"])
        .arg("--project")
        .arg(dir)
        .output()
        .unwrap()
}

#[test]
fn names_past_the_engines_length_never_reach_another_table() {
    // PostgreSQL keeps 63 bytes of a name and cuts the rest silently: the
    // shadow of a 55-byte table was cut to an unrelated table's name, which
    // the setup dropped; a 63-byte table's shadow was cut to the table, and
    // `rollback` dropped production.
    let Some(db) = engines::require(engines::postgres(), "PostgreSQL").map(Db::Pg) else {
        return;
    };
    let long = "b".repeat(55);
    let dir = appending_project(&db, &long);
    let bystander = format!("mart.\"{long}__backfi\"");
    db.run_file(&format!(
        "create table {bystander} (k text); insert into {bystander} values ('payroll');"
    ))
    .unwrap();
    let out = plan_shell(dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("63 bytes"), "{err}");
    assert_eq!(
        db.run(&format!("select k from {bystander}")).unwrap(),
        "payroll"
    );
    // 45 bytes: the shadow fits, its dated work tables would not, so they
    // are named short; the plan runs and restates to the source.
    let name = "c".repeat(45);
    let dir = appending_project(&db, &name);
    let out = plan_shell(dir.path());
    let script = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (code, err) = run_plan(&db, dir.path(), &script, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("truncated"), "{err}");
    assert_eq!(
        db.run(&format!("select count(*), sum(v) from mart.\"{name}\""))
            .unwrap(),
        db.run("select count(*), sum(v) from raw.orders").unwrap()
    );
    assert_eq!(
        db.run("select count(*) from pg_tables where schemaname = 'mart'")
            .unwrap(),
        "1"
    );
}

/// [`plan_shell`] for `dir`, which must succeed, run on `db`: the run's
/// exit code and stderr.
fn plan_and_run(db: &Db, dir: &Path) -> (i32, String) {
    let out = plan_shell(dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    run_plan(db, dir, &String::from_utf8(out.stdout).unwrap(), &[])
}

/// The `defaults` project: `mart.daily` loaded from `raw.orders` by a job
/// giving `order_date`, `orders` and `revenue` only; `tables` says whether
/// ripple.yml names the catalog lines.
fn defaults_project(db: &Db, job_gives: &str, tables: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("jobs")).unwrap();
    std::fs::write(
        dir.path().join("jobs/daily.sql"),
        format!(
            "delete from mart.daily where order_date >= '2026-01-01';\ninsert into mart.daily ({job_gives}) select cast(ordered_at as date), count(*), sum(amount){} from raw.orders group by 1;\n",
            if job_gives.contains("loaded_at") { ", now()" } else { "" }
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("ripple.yml"),
        format!(
            "dialect: {}\nmodels: [jobs]\n{}datasets:\n  raw.orders: {{ grain: day, start: 2026-01-01 }}\n  mart.daily: {{ grain: day, partition_column: order_date }}\n",
            db.dialect(),
            if tables { "tables: [tables.jsonl]\n" } else { "" }
        ),
    )
    .unwrap();
    if tables {
        describe_any(db, dir.path());
    }
    dir
}

#[test]
fn a_default_that_writes_or_draws_production_never_runs_before_the_swap() {
    // `like ... including all` keeps a table's defaults on its work copies:
    // a default calling a function that writes, or drawing production's
    // sequence inside an expression, ran in every task before the swap.
    let Some(db) = engines::require(engines::postgres(), "PostgreSQL").map(Db::Pg) else {
        return;
    };
    db.run_file(
        "create schema raw; create schema mart;
create table raw.orders (order_id int, ordered_at timestamp, amount numeric);
insert into raw.orders select g, timestamp '2026-01-01' + g * interval '3 hours', g from generate_series(1, 400) g;
create table mart.audit (at timestamptz, what text);
create function mart.stamp() returns timestamptz language plpgsql as $$ begin insert into mart.audit values (now(), 'row loaded'); return now(); end $$;
create sequence mart.seq;
create table mart.daily (id bigint default (nextval('mart.seq') + 0), order_date date, orders bigint, revenue numeric,
  loaded_at timestamptz default mart.stamp(), batch uuid default gen_random_uuid(), noted date default current_date,
  check (length(cast(order_date as text)) = 10));
insert into mart.daily (order_date, orders, revenue) select cast(ordered_at as date), count(*), sum(amount) from raw.orders group by 1;
truncate mart.audit;",
    )
    .unwrap();
    let state = |db: &Db| {
        db.run("select (select count(*) from mart.audit), (select last_value from mart.seq), (select count(*) from mart.daily)")
            .unwrap()
    };
    let before = state(&db);
    // Nothing describes the table: the engine finds the calls and the run
    // stops before its setup.
    let dir = defaults_project(&db, "order_date, orders, revenue", false);
    let (code, err) = plan_and_run(&db, dir.path());
    assert_ne!(code, 0);
    assert!(
        err.contains("the default or check of id,loaded_at calls a function that may write"),
        "{err}"
    );
    assert_eq!(state(&db), before, "production unchanged");
    // Described: the plan itself is refused, naming the call.
    let dir = defaults_project(&db, "order_date, orders, revenue", true);
    let out = plan_shell(dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("which calls `nextval`"), "{err}");
    // A job giving those columns never runs their defaults; the harmless
    // ones (a random uuid, the date, a check on a built-in) are kept.
    db.run("alter table mart.daily alter column id drop default")
        .unwrap();
    let dir = defaults_project(&db, "order_date, orders, revenue, loaded_at", false);
    let (code, err) = plan_and_run(&db, dir.path());
    assert_eq!(code, 0, "{err}");
    assert_eq!(db.run("select count(*) from mart.audit").unwrap(), "0");
    assert_eq!(
        db.run("select count(*), count(distinct batch), count(noted) from mart.daily where order_date between '2026-01-10' and '2026-01-11'")
            .unwrap(),
        "2|2|2"
    );
}

#[test]
fn a_duckdb_default_drawing_inside_an_expression_is_refused() {
    let Some(db) = engines::require(engines::duckdb(), "the DuckDB CLI").map(Db::Duck) else {
        return;
    };
    db.run_file(
        "create schema raw; create schema mart;
create table raw.orders (order_id int, ordered_at timestamp, amount decimal(18,2));
insert into raw.orders select g, timestamp '2026-01-01' + g * interval '3 hours', g from range(1, 401) t(g);
create sequence mart.seq;
create macro mart.pick() as nextval('mart.seq');
create table mart.daily (id bigint default (nextval('mart.seq') + 0), order_date date, orders bigint, revenue decimal(18,2), tag bigint default mart.pick());
insert into mart.daily (order_date, orders, revenue) select cast(ordered_at as date), count(*), sum(amount) from raw.orders group by 1;",
    )
    .unwrap();
    let seq = || db.run("select currval('mart.seq')").unwrap();
    let before = (seq(), exact_daily(&db));
    let dir = defaults_project(&db, "order_date, orders, revenue", false);
    let (code, err) = plan_and_run(&db, dir.path());
    assert_ne!(code, 0);
    assert!(
        err.contains("the default or check of id,tag calls"),
        "{err}"
    );
    assert_eq!((seq(), exact_daily(&db)), before);
    let dir = defaults_project(&db, "order_date, orders, revenue", true);
    let err = String::from_utf8_lossy(&plan_shell(dir.path()).stderr).to_string();
    assert!(err.contains("`mart.daily`.`id` is computed by"), "{err}");
}

fn exact_daily(db: &Db) -> String {
    db.run("select * from mart.daily order by order_date")
        .unwrap()
}

#[test]
fn a_rule_or_a_domain_default_that_draws_stops_the_setup() {
    // A rule rewrote the swap's delete (soft delete: old rows kept beside
    // the new), and a domain's `nextval` default drew production's sequence
    // in every task: neither was in the catalog lines nor the check.
    let Some(db) = engines::require(engines::postgres(), "PostgreSQL").map(Db::Pg) else {
        return;
    };
    db.run_file(
        "create schema raw; create schema mart;
create table raw.orders (order_id int, ordered_at timestamp, amount numeric);
insert into raw.orders select g, timestamp '2026-01-01' + g * interval '3 hours', g from generate_series(1, 400) g;
create sequence mart.global_seq;
create domain mart.d_id as bigint default nextval('mart.global_seq');
create table mart.daily (id mart.d_id, order_date date, orders bigint, revenue numeric);
insert into mart.daily (order_date, orders, revenue) select cast(ordered_at as date), count(*), sum(amount) from raw.orders group by 1;",
    )
    .unwrap();
    let state = |db: &Db| {
        db.run("select (select last_value from mart.global_seq), (select count(*) from mart.daily), (select sum(revenue) from mart.daily)")
            .unwrap()
    };
    let run = |db: &Db| {
        plan_and_run(
            db,
            defaults_project(db, "order_date, orders, revenue", true).path(),
        )
    };
    let before = state(&db);
    let (code, err) = run(&db);
    assert_ne!(code, 0);
    assert!(err.contains("the default or check of id calls"), "{err}");
    assert_eq!(state(&db), before);
    db.run_file(
        "alter table mart.daily alter column id type bigint; alter table mart.daily alter column id drop default;
create rule keep_deletes as on delete to mart.daily do instead update mart.daily set revenue = -abs(old.revenue) where order_date = old.order_date;",
    )
    .unwrap();
    let before = state(&db);
    let (code, err) = run(&db);
    assert_ne!(code, 0);
    assert!(err.contains("triggers: found rule keep_deletes"), "{err}");
    assert_eq!(state(&db), before);
}

#[test]
fn a_staging_table_s_serial_key_numbers_its_scratch_copy_without_drawing_production() {
    // The job refills a staging table with a `bigserial` key, then its
    // table from it. The stage's scratch copy kept `default nextval(...)`:
    // the task drew production's sequence (41 -> 82) before the swap.
    let Some(db) = engines::require(engines::postgres(), "PostgreSQL").map(Db::Pg) else {
        return;
    };
    db.run_file(
        "create schema raw; create schema mart;
create table raw.orders (order_id int primary key, ordered_at timestamp, amount numeric(12,2));
insert into raw.orders select i, timestamp '2026-01-01' + i * interval '97 minutes', (i % 13) * 10 + 5 from generate_series(1, 600) i;
create table mart.daily_stage (id bigserial primary key, order_date date, orders bigint, revenue numeric);
create table mart.daily (id bigint, order_date date, orders bigint, revenue numeric);",
    )
    .unwrap();
    let job = "truncate mart.daily_stage;
insert into mart.daily_stage (order_date, orders, revenue) select cast(ordered_at as date), count(*), sum(amount) from raw.orders group by 1;
delete from mart.daily;
insert into mart.daily (id, order_date, orders, revenue) select id, order_date, orders, revenue from mart.daily_stage;
";
    db.run_file(job).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("jobs")).unwrap();
    std::fs::write(dir.path().join("jobs/daily.sql"), job).unwrap();
    std::fs::write(
        dir.path().join("ripple.yml"),
        "dialect: postgres\nmodels: [jobs]\ntables: [tables.jsonl]\ndatasets:\n  raw.orders: { grain: day, start: 2026-01-01 }\n  mart.daily: { partition_column: order_date }\n  mart.daily_stage: { unique_key: [order_date] }\n",
    )
    .unwrap();
    describe_any(&db, dir.path());
    let seq = || {
        db.run("select last_value from mart.daily_stage_id_seq")
            .unwrap()
    };
    let before = seq();
    // Everything the plan runs before its swap, then the swap.
    let out = plan_shell(dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let script = String::from_utf8(out.stdout).unwrap();
    let cut = script.find("\n# swap phase").expect("a swap phase");
    let head = format!("{}\nexit 0\n", &script[..cut]);
    let (code, err) = run_plan(&db, dir.path(), &head, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(seq(), before, "production's sequence drawn before the swap");
    let (code, err) = run_plan(&db, dir.path(), &script, &[]);
    assert_eq!(code, 0, "{err}");
    // The restated days hold what the job gives, numbered past where
    // production's sequence stood, as a production run would number them.
    assert_eq!(
        db.run("select count(*) from mart.daily d join (select cast(ordered_at as date) as order_date, count(*) as orders, sum(amount) as revenue from raw.orders group by 1) r using (order_date, orders, revenue)").unwrap(),
        db.run("select count(*) from mart.daily").unwrap()
    );
    let before: i64 = before.trim().parse().unwrap();
    let lowest: i64 = db
        .run(
            "select min(id) from mart.daily where order_date between '2026-01-10' and '2026-01-11'",
        )
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(lowest > before, "{lowest} <= {before}");
}

#[test]
fn a_job_creating_its_table_if_missing_upserts_on_production_s_later_key() {
    // `create table if not exists` without the key a DBA added later, then
    // `on conflict (order_date)`: the work table was made from the job's
    // DDL, keyless, and the task failed ("no unique or exclusion
    // constraint matching the ON CONFLICT specification").
    let Some(db) = engines::require(engines::postgres(), "PostgreSQL").map(Db::Pg) else {
        return;
    };
    let job =
        "create table if not exists mart.daily (order_date date, orders bigint, revenue numeric);
insert into mart.daily (order_date, orders, revenue)
select cast(ordered_at as date), count(*), sum(amount) from raw.orders group by 1
on conflict (order_date) do update set orders = excluded.orders, revenue = excluded.revenue;
";
    db.run_file(
        "create schema raw; create schema mart;
create table raw.orders (order_id int primary key, ordered_at timestamp, amount numeric(12,2));
insert into raw.orders select i, timestamp '2026-01-01' + i * interval '97 minutes', (i % 13) * 10 + 5 from generate_series(1, 500) i;
update raw.orders set amount = amount * 100 where ordered_at::date = '2026-01-10';
create table mart.daily (order_date date, orders bigint, revenue numeric);
alter table mart.daily add primary key (order_date);",
    )
    .unwrap();
    db.run_file(job).unwrap();
    db.run(FIX_THE_10TH).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("jobs")).unwrap();
    std::fs::write(dir.path().join("jobs/daily.sql"), job).unwrap();
    std::fs::write(
        dir.path().join("ripple.yml"),
        "dialect: postgres\nmodels: [jobs]\ntables: [tables.jsonl]\ndatasets:\n  raw.orders: { grain: day, start: 2026-01-01, partition_column: ordered_at }\n  mart.daily: { partition_column: order_date }\n",
    )
    .unwrap();
    describe_any(&db, dir.path());
    let (code, err) = plan_and_run(&db, dir.path());
    assert_eq!(code, 0, "{err}");
    // What a recompute gives, every day.
    assert_eq!(db.run(DAILY_DIFFERS).unwrap(), "0");
}

/// A project of `jobs` (file name, SQL) on PostgreSQL `db`, whose
/// `raw.orders` is the restated table, described by the catalog.
fn pg_project(db: &Db, jobs: &[(&str, &str)], datasets: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("jobs")).unwrap();
    for (name, sql) in jobs {
        std::fs::write(dir.path().join("jobs").join(name), sql).unwrap();
    }
    std::fs::write(
        dir.path().join("ripple.yml"),
        format!("dialect: postgres\nmodels: [jobs]\ntables: [tables.jsonl]\ndatasets:\n  raw.orders: {{ grain: day, start: 2026-01-01, partition_column: ordered_at }}\n{datasets}"),
    )
    .unwrap();
    describe_any(db, dir.path());
    dir
}

/// The days where `mart.daily` differs from a recompute from `raw.orders`.
const DAILY_DIFFERS: &str = "select count(*) from mart.daily d full join (select cast(ordered_at as date) as order_date, count(*) as orders, sum(amount) as revenue from raw.orders group by 1) r using (order_date) where d.revenue is distinct from r.revenue or d.orders is distinct from r.orders";

/// The upstream fix of [`ORDERS_WRONG_ON_THE_10TH`].
const FIX_THE_10TH: &str =
    "update raw.orders set amount = amount / 100 where ordered_at::date = '2026-01-10'";

/// `raw.orders`, wrong on 2026-01-10 when the jobs run, fixed after.
const ORDERS_WRONG_ON_THE_10TH: &str = "create schema raw; create schema mart;
create table raw.orders (order_id int primary key, ordered_at timestamp, amount numeric(12,2));
insert into raw.orders select i, timestamp '2026-01-01' + i * interval '97 minutes', (i % 13) * 10 + 5 from generate_series(1, 500) i;
update raw.orders set amount = amount * 100 where ordered_at::date = '2026-01-10';";

#[test]
fn an_upsert_on_a_partial_unique_index_runs_on_its_work_table() {
    // `on conflict (order_date) where order_date is not null` needs the
    // partial unique index production has; the work table had none and
    // the task failed.
    let Some(db) = engines::require(engines::postgres(), "PostgreSQL").map(Db::Pg) else {
        return;
    };
    let job = "insert into mart.daily (order_date, orders, revenue)
select cast(ordered_at as date), count(*), sum(amount) from raw.orders group by 1
on conflict (order_date) where order_date is not null do update set orders = excluded.orders, revenue = excluded.revenue;
";
    db.run_file(&format!(
        "{ORDERS_WRONG_ON_THE_10TH}
create table mart.daily (id bigint generated always as identity primary key, order_date date, orders bigint, revenue numeric);
create unique index daily_day on mart.daily (order_date) where order_date is not null;"
    ))
    .unwrap();
    db.run_file(job).unwrap();
    db.run(FIX_THE_10TH).unwrap();
    let dir = pg_project(
        &db,
        &[("daily.sql", job)],
        "  mart.daily: { partition_column: order_date, unique_key: [order_date] }\n",
    );
    let facts = std::fs::read_to_string(dir.path().join("tables.jsonl")).unwrap();
    assert!(facts.contains("\"predicate\""), "{facts}");
    let (code, err) = plan_and_run(&db, dir.path());
    assert_eq!(code, 0, "{err}");
    assert_eq!(db.run(DAILY_DIFFERS).unwrap(), "0");
}

#[test]
fn a_partition_written_by_name_is_refused_when_its_parent_is_read_and_planned_through_the_parent() {
    // The job rebuilt January's partition by name, a report read the
    // partitioned table: the report was not restated, exit 0.
    let Some(db) = engines::require(engines::postgres(), "PostgreSQL").map(Db::Pg) else {
        return;
    };
    let by_name = "delete from mart.daily_2026_01;
insert into mart.daily_2026_01 (order_date, orders, revenue)
select cast(ordered_at as date), count(*), sum(amount) from raw.orders where ordered_at >= '2026-01-01' and ordered_at < '2026-02-01' group by 1;
";
    let through_parent = "delete from mart.daily where order_date >= '2026-01-01' and order_date < '2026-02-01';
insert into mart.daily (order_date, orders, revenue)
select cast(ordered_at as date), count(*), sum(amount) from raw.orders where ordered_at >= '2026-01-01' and ordered_at < '2026-02-01' group by 1;
";
    let report = "drop table if exists mart.report;
create table mart.report as select order_date, revenue * 2 as doubled from mart.daily;
";
    db.run_file(&format!(
        "{ORDERS_WRONG_ON_THE_10TH}
create table mart.daily (order_date date not null, orders bigint, revenue numeric) partition by range (order_date);
create table mart.daily_2026_01 partition of mart.daily for values from ('2026-01-01') to ('2026-02-01');
create table mart.daily_2026_02 partition of mart.daily for values from ('2026-02-01') to ('2026-03-01');"
    ))
    .unwrap();
    db.run_file(by_name).unwrap();
    db.run_file(report).unwrap();
    db.run(FIX_THE_10TH).unwrap();
    let datasets = "  mart.daily: { partition_column: order_date }\n  mart.report: { partition_column: order_date }\n";
    let dir = pg_project(
        &db,
        &[("daily.sql", by_name), ("report.sql", report)],
        &format!("{datasets}  mart.daily_2026_01: {{ partition_column: order_date }}\n"),
    );
    let out = plan_shell(dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "planned: {err}");
    assert!(
        err.contains("`mart.daily_2026_01` as a partition (or inheriting child) of `mart.daily`")
            && err.contains("`mart.report` reads `mart.daily`"),
        "{err}"
    );
    // Written through the partitioned table, the report follows.
    let dir = pg_project(
        &db,
        &[("daily.sql", through_parent), ("report.sql", report)],
        datasets,
    );
    let (code, err) = plan_and_run(&db, dir.path());
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        db.run("select count(*) from mart.report d full join (select cast(ordered_at as date) as order_date, sum(amount) * 2 as doubled from raw.orders where ordered_at < '2026-02-01' group by 1) r using (order_date) where d.doubled is distinct from r.doubled")
            .unwrap(),
        "0"
    );
}

#[test]
fn a_job_on_a_search_path_describes_the_table_it_creates_if_missing() {
    // `set search_path to mart` then `create table if not exists daily`
    // and an insert without a column list: the DDL was taken for
    // `daily`, not `mart.daily`, and the plan was refused for want of a
    // partition column.
    let Some(db) = engines::require(engines::postgres(), "PostgreSQL").map(Db::Pg) else {
        return;
    };
    let job = "set search_path to mart, public;
create table if not exists daily (order_date date, orders bigint, revenue numeric);
delete from daily;
insert into daily select cast(ordered_at as date), count(*), sum(amount) from raw.orders group by 1;
";
    db.run_file(ORDERS_WRONG_ON_THE_10TH).unwrap();
    db.run_file(job).unwrap();
    db.run(FIX_THE_10TH).unwrap();
    let dir = pg_project(&db, &[("daily.sql", job)], "");
    let (code, err) = plan_and_run(&db, dir.path());
    assert_eq!(code, 0, "{err}");
    assert_eq!(db.run(DAILY_DIFFERS).unwrap(), "0");
}

/// A job that sets its session's zone (`SET TimeZone = 'Asia/Tokyo'`) and
/// keys its table by `date_trunc('day', ts)` of a `timestamptz`: its days
/// are Tokyo's, and so are the bounds of every filter. They were written
/// in UTC: Tokyo's 10 January (from 15:00 UTC on the 9th) was never
/// restated, with exit 0 and every check passing (round 13).
#[test]
fn a_job_s_own_zone_writes_the_bounds_of_its_days() {
    let case = Case {
        setup: "create schema raw; create schema mart;
create table raw.events (id integer, ts timestamptz, amount decimal(12, 2), kind varchar);
insert into raw.events values (1, '2026-01-09 14:30:00+00', 1.50, 'a'), (2, '2026-01-09 15:30:00+00', 2.50, 'a'), (3, '2026-01-10 10:00:00+00', 3.50, 'b'), (4, '2026-01-10 15:30:00+00', 4.50, 'a'), (5, '2026-01-11 12:00:00+00', 5.50, 'b');
update raw.events set amount = amount * 100 where ts >= '2026-01-10 00:00:00+09' and ts < '2026-01-11 00:00:00+09';
create table mart.daily (day_ts timestamptz, kind varchar, amt decimal(14, 2), n bigint);",
        jobs: &[(
            "daily",
            "SET TimeZone = 'Asia/Tokyo';\ndelete from mart.daily;\ninsert into mart.daily select date_trunc('day', ts) as day_ts, kind, sum(amount), count(*) from raw.events group by 1, 2;\n",
        )],
        yml: "datasets:\n  raw.events: { grain: day, start: 2026-01-01, partition_column: ts, time_zone: Asia/Tokyo }\n",
        fix: "update raw.events set amount = amount / 100 where ts >= '2026-01-10 00:00:00+09' and ts < '2026-01-11 00:00:00+09';",
        after: "",
        changed: "raw.events",
        day: "2026-01-10",
        dumps: &[
            "select cast(extract(epoch from day_ts) as bigint), kind, amt, n from mart.daily order by 1, 2",
        ],
    };
    for make in engines() {
        let Some(db) = make() else { continue };
        let dir = case.production(&db);
        let expected = case.recompute(make);
        assert_ne!(case.dump(&db), expected, "{}", db.dialect());
        let script = case.plan(dir.path()).unwrap();
        assert!(script.contains("+09:00"), "{script}");
        let (code, err) = run_plan(&db, dir.path(), &script, &[]);
        assert_eq!(code, 0, "{}: {err}", db.dialect());
        assert_eq!(case.dump(&db), expected, "{}", db.dialect());
    }
}

#[test]
fn partition_columns_named_with_quotes_or_reserved_words_restate_their_days() {
    // A partition column whose name needs quotes (`"Order Day"`, `"order"`)
    // was carried with its quotes, and a job grouping by it, or ranking
    // within it, was read as grouped by no time: the plan was refused for
    // want of a `start`, or restated all of time.
    let case = Case {
        setup: "create schema raw; create schema mart;
create table raw.events (id integer, ts timestamp, amount integer);
insert into raw.events values (1, '2026-03-02 09:00:00', 10), (2, '2026-03-02 18:00:00', 20), (3, '2026-03-03 08:00:00', 999), (4, '2026-03-03 12:00:00', 40), (5, '2026-03-04 07:00:00', 50);
create table mart.stg (id integer, \"Order Day\" date, amount integer);
create table mart.daily (\"day\" date, revenue bigint);
create table mart.ranked (\"order\" date, id integer, rnk bigint);
create table mart.top (\"order\" date, n bigint);",
        jobs: &[
            (
                "stg",
                "delete from mart.stg;\ninsert into mart.stg (id, \"Order Day\", amount) select id, cast(ts as date), amount from raw.events;\n",
            ),
            (
                "daily",
                "delete from mart.daily;\ninsert into mart.daily (\"day\", revenue) select \"Order Day\", sum(amount) from mart.stg group by \"Order Day\";\n",
            ),
            (
                "ranked",
                "delete from mart.ranked;\ninsert into mart.ranked (\"order\", id, rnk) select \"Order Day\", id, rank() over (partition by \"Order Day\" order by amount desc) from mart.stg;\n",
            ),
            (
                "top",
                "delete from mart.top;\ninsert into mart.top (\"order\", n) select \"order\", count(*) from mart.ranked where rnk = 1 group by 1;\n",
            ),
        ],
        yml: "datasets:\n  raw.events: { grain: day, start: 2026-03-01, partition_column: ts }\n",
        fix: "update raw.events set amount = 30 where id = 3;",
        after: "",
        changed: "raw.events",
        day: "2026-03-03",
        dumps: &[
            "select * from mart.stg order by 1",
            "select * from mart.daily order by 1",
            "select * from mart.ranked order by 1, 2",
            "select * from mart.top order by 1",
        ],
    };
    for make in engines() {
        let Some(db) = make() else { continue };
        let dir = case.production(&db);
        let expected = case.recompute(make);
        assert_ne!(case.dump(&db), expected, "{}", db.dialect());
        let script = case
            .plan(dir.path())
            .unwrap_or_else(|e| panic!("{}: {e}", db.dialect()));
        // Each dataset restates the one day, not all of time.
        for t in ["mart.daily", "mart.ranked", "mart.top"] {
            assert!(script.contains(&format!("{t}@2026-03-03")), "{t}: {script}");
        }
        assert!(!script.contains("2026-03-02"), "{script}");
        let (code, err) = run_plan(&db, dir.path(), &script, &[]);
        assert_eq!(code, 0, "{}: {err}", db.dialect());
        assert_eq!(case.dump(&db), expected, "{}", db.dialect());
    }
}

#[test]
fn a_partition_column_read_through_a_search_path_is_carried_downstream() {
    // `select "day" ... from daily_rev` under `search_path "Sales", public`:
    // the column's lineage names `daily_rev`, the graph `Sales.daily_rev`
    // (and `public.daily_rev`, which the path leaves open); the running
    // total's partition column was unknown and its plan refused.
    let case = Case {
        setup: "create schema raw; create schema \"Sales\";
create table raw.events (id integer, ts timestamp, amount integer);
insert into raw.events values (1, '2026-03-01 09:00:00', 10), (2, '2026-03-02 18:00:00', 20), (3, '2026-03-03 08:00:00', 999), (4, '2026-03-03 12:00:00', 40), (5, '2026-03-04 07:00:00', 50);
create table \"Sales\".daily_rev (\"day\" date primary key, rev bigint);",
        jobs: &[
            (
                "daily",
                "set search_path to \"Sales\", public;\ndelete from daily_rev;\ninsert into daily_rev (\"day\", rev) select cast(ts as date), sum(amount) from raw.events group by 1;\n",
            ),
            (
                "running",
                "set search_path to \"Sales\", public;\ndrop table if exists running_rev;\ncreate table running_rev as select \"day\", rev, sum(rev) over (order by \"day\") as running, lag(rev) over (order by \"day\") as prev from daily_rev;\n",
            ),
        ],
        yml: "datasets:\n  raw.events: { grain: day, start: 2026-03-01, partition_column: ts }\n  Sales.daily_rev: { partition_column: day }\n",
        fix: "update raw.events set amount = 30 where id = 3;",
        after: "",
        changed: "raw.events",
        day: "2026-03-03",
        dumps: &[
            "select * from \"Sales\".daily_rev order by 1",
            "select * from \"Sales\".running_rev order by 1",
        ],
    };
    let make = || engines::require(engines::postgres(), "PostgreSQL").map(Db::Pg);
    let Some(db) = make() else { return };
    let dir = case.production(&db);
    let expected = case.recompute(make);
    assert_ne!(case.dump(&db), expected);
    let script = case.plan(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        script.contains("Sales.running_rev@2026-03-03..2026-03-04"),
        "{script}"
    );
    let (code, err) = run_plan(&db, dir.path(), &script, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(case.dump(&db), expected);
}

#[test]
fn a_job_rewriting_only_its_last_days_cannot_empty_the_rest() {
    // The late-arriving-data job rewrites the days a reload queue names
    // (the last three), through a temporary table and a join: a shape no
    // reading of its SQL tells from a calendar join. Restated into an
    // empty work table, it kept only the queued days; with the row count
    // off, the plan ran to exit 0 and production lost the restated day.
    // The non-empty check, partition by partition, stops it before the
    // swap.
    let case = Case {
        setup: "create schema raw; create schema mart; create schema ctl;
create table raw.changes (id integer, changed_at timestamp);
insert into raw.changes select i, timestamp '2026-03-01 10:00:00' + (i % 8) * interval '1 day' from generate_series(1, 40) i;
create table ctl.reload_days (day date);
insert into ctl.reload_days values ('2026-03-06'), ('2026-03-07'), ('2026-03-08');
create table mart.recent (day date, n bigint);",
        jobs: &[(
            "recent",
            "create temp table todo as select day from ctl.reload_days;\ndelete from mart.recent using todo where mart.recent.day = todo.day;\ninsert into mart.recent select cast(c.changed_at as date), count(*) from raw.changes c join todo on cast(c.changed_at as date) = todo.day group by 1;\n",
        )],
        yml: "datasets:\n  raw.changes: { grain: day, start: 2026-03-01, partition_column: changed_at }\n  mart.recent: { partition_column: day, start: 2026-03-01, checks: { row_count: false } }\n",
        fix: "delete from raw.changes where id = 3;",
        after: "",
        changed: "raw.changes",
        day: "2026-03-03",
        dumps: &["select * from mart.recent order by 1"],
    };
    let make = || engines::require(engines::postgres(), "PostgreSQL").map(Db::Pg);
    let Some(db) = make() else { return };
    // Production: eight days, run day by day as the job's schedule did.
    db.run_file(case.setup).unwrap();
    db.run("insert into mart.recent select cast(changed_at as date), count(*) from raw.changes group by 1")
        .unwrap();
    db.run_file(case.fix).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("jobs")).unwrap();
    std::fs::write(dir.path().join("jobs/recent.sql"), case.jobs[0].1).unwrap();
    std::fs::write(
        dir.path().join("ripple.yml"),
        format!(
            "dialect: postgres\nmodels: [jobs]\ntables: [tables.jsonl]\n{}",
            case.yml
        ),
    )
    .unwrap();
    describe_any(&db, dir.path());
    let before = case.dump(&db);
    let script = case.plan(dir.path()).unwrap();
    let (code, err) = run_plan(&db, dir.path(), &script, &[]);
    assert_ne!(code, 0, "the plan emptied partitions and passed");
    assert!(err.contains("the rebuild emptied it"), "{err}");
    assert_eq!(case.dump(&db), before, "production changed");
}

#[test]
fn a_duckdb_shadow_keeps_the_case_its_columns_are_written_in() {
    // Round 28: the catalog's `S0` came back as `s0` in the shadow, and a
    // reader's `to_json(p)` wrote `{"s0": ...}` into production, exit 0.
    let Some(db) = engines::require(engines::duckdb(), "the DuckDB CLI").map(Db::Duck) else {
        return;
    };
    let piv = "create or replace table mart.piv as select cast(ordered_at as date) as order_date, sum(amount) filter (where order_id % 2 = 0) as \"Even\", sum(amount) as Total from raw.orders group by 1;\n";
    let doc = "create or replace table mart.doc as select p.order_date, to_json(p) as doc from mart.piv p;\n";
    db.run_file(&format!(
        "create schema raw; create schema mart;
create table raw.orders (order_id int, ordered_at timestamp, amount decimal(18,2));
insert into raw.orders select g, timestamp '2026-01-01' + g * interval '3 hours', g from range(1, 401) t(g);
{piv}{doc}"
    ))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("jobs")).unwrap();
    std::fs::write(dir.path().join("jobs/1_piv.sql"), piv).unwrap();
    std::fs::write(dir.path().join("jobs/2_doc.sql"), doc).unwrap();
    std::fs::write(
        dir.path().join("ripple.yml"),
        "dialect: duckdb\nmodels: [jobs]\ntables: [tables.jsonl]\ndatasets:\n  raw.orders: { grain: day, start: 2026-01-01 }\n  mart.piv: { grain: day, partition_column: order_date }\n  mart.doc: { grain: day, partition_column: order_date }\n",
    )
    .unwrap();
    describe_any(&db, dir.path());
    // The data is as the jobs made it: a restatement gives the same rows.
    let docs = || {
        db.run("select doc from mart.doc order by order_date")
            .unwrap()
    };
    let before = docs();
    assert!(before.contains("\"Even\""), "{before}");
    let (code, err) = plan_and_run(&db, dir.path());
    assert_eq!(code, 0, "{err}");
    assert_eq!(docs(), before);
}

#[test]
fn a_table_made_then_updated_is_restated_with_every_column() {
    // Round 29: `create table as` then `update ... set flag` was copied and
    // swapped as `flag` alone: every other column NULL in production, exit 0.
    let Some(db) = engines::require(engines::duckdb(), "the DuckDB CLI").map(Db::Duck) else {
        return;
    };
    let job = "create or replace table mart.flags as select order_id, cast(ordered_at as date) as order_date, false as big from raw.orders;\n\
               update mart.flags f set big = true from (select order_id from raw.orders where amount > 300) s where s.order_id = f.order_id;\n";
    db.run_file(&format!(
        "create schema raw; create schema mart;
create table raw.orders (order_id int, ordered_at timestamp, amount decimal(18,2));
insert into raw.orders select g, timestamp '2026-01-01' + g * interval '3 hours', g from range(1, 401) t(g);
{job}"
    ))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("jobs")).unwrap();
    std::fs::write(dir.path().join("jobs/flags.sql"), job).unwrap();
    std::fs::write(
        dir.path().join("ripple.yml"),
        "dialect: duckdb\nmodels: [jobs]\ndatasets:\n  raw.orders: { grain: day, start: 2026-01-01 }\n  mart.flags: { grain: none }\n",
    )
    .unwrap();
    let rows = || {
        db.run("select * from mart.flags order by order_id")
            .unwrap()
    };
    let before = rows();
    let (code, err) = plan_and_run(&db, dir.path());
    assert_eq!(code, 0, "{err}");
    assert_eq!(rows(), before);
}
