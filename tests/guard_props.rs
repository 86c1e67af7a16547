//! The static guard, property-tested: whatever random job script ripple is
//! given, the task script it emits either is refused or names no production
//! table at all (reads of restated tables go to their shadows, writes to the
//! task's work and scratch tables). The check is textual, independent of
//! ripple's own lineage code.

use std::collections::HashMap;

use proptest::prelude::*;
use ripple::plan::executors::{ScriptTarget, guarded_script};
use ripple::sql::SqlDialect;

/// Production tables: `prod.t0` is the task's dataset, `prod.t1` another
/// restated dataset, `prod.t2`/`prod.t3` production the plan does not touch.
const TABLES: [&str; 4] = ["prod.t0", "prod.t1", "prod.t2", "prod.t3"];

fn table() -> impl Strategy<Value = &'static str> {
    prop::sample::select(&TABLES[..])
}

fn source() -> impl Strategy<Value = &'static str> {
    prop::sample::select(&["src.a", "src.b", "prod.t1"][..])
}

/// One statement of a job, in the forms teams write and the forms that
/// would hurt production.
fn statement() -> impl Strategy<Value = String> {
    prop_oneof![
        (table(), source()).prop_map(|(t, s)| format!("insert into {t} select * from {s}")),
        (table(), source()).prop_map(|(t, s)| format!("create table {t} as select x from {s}")),
        table().prop_map(|t| format!("drop table if exists {t}")),
        table().prop_map(|t| format!("truncate table {t}")),
        table().prop_map(|t| format!("delete from {t} where x > 1")),
        (table(), source()).prop_map(|(t, s)| format!("update {t} set x = 1 from {s} where {t}.y = {s}.y")),
        table().prop_map(|t| format!("alter table {t} add column z int")),
        (table(), prop::sample::select(&["t0", "t2", "tmp_new"][..]))
            .prop_map(|(t, n)| format!("alter table {t} rename to {n}")),
        table().prop_map(|t| format!("create index i on {t} (x)")),
        table().prop_map(|t| format!("grant select on {t} to reader")),
        table().prop_map(|t| format!("comment on table {t} is 'x'")),
        (table(), source()).prop_map(|(t, s)| format!(
            "merge into {t} m using {s} s on m.id = s.id when matched then update set x = s.x when not matched then insert (id, x) values (s.id, s.x)"
        )),
        source().prop_map(|s| format!("create temp table stage as select * from {s}")),
        table().prop_map(|t| format!("insert into {t} select * from stage")),
        // Writes hidden inside another statement: each runs in PostgreSQL.
        (table(), table()).prop_map(|(t, u)| format!(
            "with d as (delete from {u} returning *) insert into {t} select * from src.a"
        )),
        table().prop_map(|t| format!("with u as (update {t} set x = 1 returning x) select count(*) from u")),
        table().prop_map(|t| format!("with i as (insert into {t} select * from src.b) select 1")),
        table().prop_map(|t| format!("explain analyze delete from {t}")),
        table().prop_map(|t| format!("explain (analyze, format json) update {t} set x = 1")),
        table().prop_map(|t| format!("copy (delete from {t} returning *) to stdout")),
        Just("drop schema prod cascade".to_string()),
        Just("grant all on all tables in schema prod to reader".to_string()),
    ]
}

/// Whether `sql` names production table `t` (quoted or not), other than as
/// the stem of a shadow, work or scratch name.
fn names(sql: &str, t: &str) -> bool {
    let plain = sql.replace('"', "").to_lowercase();
    let mut rest = plain.as_str();
    while let Some(i) = rest.find(t) {
        let after = rest[i + t.len()..].chars().next();
        let before = rest[..i].chars().last();
        let bounded = !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.');
        if bounded {
            return true;
        }
        rest = &rest[i + t.len()..];
    }
    false
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(512),
        ..ProptestConfig::default()
    })]

    #[test]
    fn emitted_task_scripts_name_no_production_table(
        job in prop::collection::vec(statement(), 1..6),
        dialect in prop::sample::select(&[SqlDialect::Postgres, SqlDialect::DuckDb, SqlDialect::Snowflake][..]),
    ) {
        let sql = job.join(";\n");
        let shadows: HashMap<String, String> = [
            ("prod.t0".to_string(), "prod.t0__backfill".to_string()),
            ("prod.t1".to_string(), "prod.t1__backfill".to_string()),
        ]
        .into();
        let out = guarded_script(
            &sql,
            dialect,
            &ScriptTarget {
                relation: "prod.t0",
                shadow: "prod.t0__backfill",
                shadows: &shadows,
                filter: Some("d >= '2026-01-10'"),
                columns: Some(&["x".to_string()]),
                known: None,
                suffix: "_20260110",
            },
        );
        let Ok(script) = out else {
            // Refused: nothing is emitted.
            return Ok(());
        };
        for s in &script {
            // ripple's own empty copies read production's columns, nothing else.
            let s = match s
                .split_once(" as select * from ")
                .or_else(|| s.split_once(" (like "))
                .or_else(|| s.split_once(" like "))
            {
                // Upper case on engines that fold names to it (Snowflake).
                Some((made, from))
                    if (made.to_lowercase().contains("__work_")
                        || made.to_lowercase().contains("__scratch_"))
                        && (from.ends_with(" where 1 = 0")
                            || from.ends_with(" including all)")
                            || !from.contains(' ')) =>
                {
                    made
                }
                _ => s.as_str(),
            };
            for t in TABLES {
                prop_assert!(!names(s, t), "{t} named by emitted `{s}` for job:\n{sql}");
            }
            prop_assert!(!s.to_lowercase().contains("schema prod"), "{s}");
        }
        // What the guard refuses, it refuses for a reason it can name: a
        // statement dropping or granting on a whole schema is never emitted.
        if sql.contains("drop schema") || sql.contains("all tables in schema") {
            prop_assert!(false, "a schema-wide statement was emitted: {sql}");
        }
    }
}

#[test]
fn the_textual_check_sees_production_names() {
    assert!(names("insert into prod.t2 select 1", "prod.t2"));
    assert!(names("INSERT INTO \"prod\".\"t2\" SELECT 1", "prod.t2"));
    assert!(!names(
        "insert into \"prod\".\"t2__backfill\" select 1",
        "prod.t2"
    ));
    assert!(!names(
        "insert into prod.t0__backfill__work_1 select 1",
        "prod.t0"
    ));
}

#[test]
fn everyday_jobs_pass_and_hostile_ones_are_refused() {
    let shadows: HashMap<String, String> =
        [("prod.t1".to_string(), "prod.t1__backfill".to_string())].into();
    let run = |sql: &str| {
        guarded_script(
            sql,
            SqlDialect::Postgres,
            &ScriptTarget {
                relation: "prod.t0",
                shadow: "prod.t0__backfill",
                shadows: &shadows,
                filter: None,
                columns: None,
                known: None,
                suffix: "_full",
            },
        )
    };
    for ok in [
        "drop table if exists prod.t0; create table prod.t0 as select * from prod.t1",
        "truncate table prod.t0; insert into prod.t0 select * from src.a",
        "create table stage.x as select * from src.a; insert into prod.t0 select * from stage.x; drop table stage.x",
        "insert into prod.t0 select * from src.a; update prod.t0 set x = 1 from src.a where prod.t0.y = src.a.y",
        "create table prod.t0_new as select 1 as x; drop table if exists prod.t0; alter table prod.t0_new rename to t0",
    ] {
        assert!(run(ok).is_ok(), "{ok}: {:?}", run(ok));
    }
    // `SELECT ... INTO` fills a table of the job's: it is redirected like
    // any other staging table, never written under production's name.
    let into = run("select * into stage.y from src.a; insert into prod.t0 select * from stage.y; drop table stage.y")
        .expect("select into a staging table is the job's own");
    let text = format!("{into:?}");
    assert!(!text.contains("stage.y "), "{text}");
    assert!(text.contains("__scratch"), "{text}");
    for bad in [
        "insert into prod.t0 select 1; drop table prod.t2",
        "truncate table prod.t3",
        // Emptied, never filled: another job's table, even listed second.
        "truncate prod.t0, prod.t3; insert into prod.t0 select 1",
        // Rows only changed, never filled: the task's work table starts
        // empty, so the swap would empty the restated partitions.
        "update prod.t0 set x = 1 from src.a where prod.t0.y = src.a.y",
        "delete from prod.t0 where d < '2025-01-01'",
        "alter table prod.t0 rename to t2",
        "grant select on prod.t2 to reader",
        "drop schema prod cascade",
        "insert into prod.t0 select (",
    ] {
        assert!(run(bad).is_err(), "{bad} was not refused");
    }
}
