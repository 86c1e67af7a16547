//! Column-pruned impact (`--columns`): only what reads the wrong columns,
//! as values or to decide rows. The worked example gives the exact pruned
//! sets; random column graphs are checked against a brute-force oracle that
//! walks the generated SQL's column edges itself.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use proptest::prelude::*;
use ripple::graph::LineageGraph;
use ripple::impact::{ImpactRequest, TimeFacts, impact};
use ripple::ingest::{LoadOptions, load_project};
use ripple::time::TimeKey;

fn request(changed: &str, columns: &[&str]) -> ImpactRequest {
    ImpactRequest {
        changed: vec![changed.to_string()],
        from: TimeKey::parse("2026-01-10").unwrap(),
        to: TimeKey::parse("2026-01-12").unwrap(),
        as_of: TimeKey::parse("2026-02-01").unwrap().start,
        columns: columns.iter().map(|c| c.to_string()).collect(),
    }
}

/// (dataset name → affected columns) of the impact.
fn affected(g: &LineageGraph, req: &ImpactRequest) -> BTreeMap<String, Vec<String>> {
    let facts = TimeFacts::build(g).unwrap();
    let (impact, _) = impact(g, &facts, req, false).unwrap();
    impact
        .datasets
        .into_iter()
        .map(|d| (d.name, d.columns))
        .collect()
}

fn graph(root: &Path) -> LineageGraph {
    LineageGraph::build(load_project(root, &LoadOptions::default()).unwrap())
}

fn map(entries: &[(&str, &[&str])]) -> BTreeMap<String, Vec<String>> {
    entries
        .iter()
        .map(|(k, v)| (k.to_string(), v.iter().map(|c| c.to_string()).collect()))
        .collect()
}

#[test]
fn the_worked_example_pruned_by_one_column() {
    let g = graph(Path::new("fixtures/worked_example/declared"));
    // `amount` flows into revenue; nothing reads it to pick rows.
    assert_eq!(
        affected(&g, &request("raw.orders", &["amount"])),
        map(&[
            ("raw.orders", &["amount"]),
            ("stg_orders", &["amount"]),
            ("orders_7d", &["revenue_7d"]),
            ("weekly_revenue", &["revenue"]),
            ("monthly_kpis", &["revenue"]),
        ])
    );
    // `customer_id` groups dim_customers: all of it, and what reads it.
    assert_eq!(
        affected(&g, &request("raw.orders", &["customer_id"])),
        map(&[
            ("raw.orders", &["customer_id"]),
            ("stg_orders", &["customer_id"]),
            ("dim_customers", &["*"]),
            ("customer_segments", &["*"]),
        ])
    );
    // A column nothing downstream reads: only the table itself.
    assert_eq!(
        affected(&g, &request("raw.orders", &["status"])),
        map(&[("raw.orders", &["status"])])
    );
    // Without --columns: everything downstream (order_audit maps time
    // `none`), no column lists.
    let all = affected(&g, &request("raw.orders", &[]));
    assert_eq!(all.len(), 7);
    assert!(all.values().all(Vec::is_empty));
}

#[test]
fn what_ripple_cannot_read_counts_as_reading_every_column() {
    let dir = tempfile::tempdir().unwrap();
    let files: &[(&str, &str)] = &[
        (
            "ripple.yml",
            "dialect: postgres\nmodels: [jobs]\ndatasets:\n  s.raw: { grain: day, start: 2026-01-01 }\n",
        ),
        // Reads only `b`: left out when `a` is wrong.
        (
            "jobs/only_b.sql",
            "create table s.only_b as select b from s.raw",
        ),
        // A `*` whose columns are unknown: possibly every column.
        (
            "jobs/star.sql",
            "create table s.star as select * from s.raw",
        ),
        // A DELETE ... USING: no column lineage for it, so every column.
        (
            "jobs/deleted.sql",
            "delete from s.deleted d using s.raw r where d.id = r.b",
        ),
        // A MERGE that sets `c` from `a`: that column only.
        (
            "jobs/merged.sql",
            "merge into s.merged m using s.raw r on m.id = r.id when matched then update set c = r.a, d = r.b",
        ),
        // Goes through a staging table the script reads back.
        (
            "jobs/staged.sql",
            "create temp table tmp as select b from s.raw; create table s.staged as select b from tmp",
        ),
        // No column list, the table's columns unknown: `a` lands by position
        // in whichever column is second, not in one called `a` (round 26:
        // `s.pos_reader`, reading `x`, was left out).
        (
            "jobs/positional.sql",
            "insert into s.pos select id, a, b from s.raw",
        ),
        (
            "jobs/pos_reader.sql",
            "create table s.pos_reader as select id, x from s.pos",
        ),
        // The table made by the same script: by position, exactly.
        (
            "jobs/known_pos.sql",
            "create table s.kpos (id int, x int, y int); insert into s.kpos select id, a, b from s.raw",
        ),
        (
            "jobs/kpos_y.sql",
            "create table s.kpos_y as select id, y from s.kpos",
        ),
    ];
    for (p, t) in files {
        let path = dir.path().join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, t).unwrap();
    }
    let g = graph(dir.path());
    let got = affected(&g, &request("s.raw", &["a"]));
    assert!(!got.contains_key("s.only_b"), "{got:?}");
    assert_eq!(
        got.get("s.star").map(Vec::as_slice),
        Some(&["a".to_string()][..]),
        "{got:?}"
    );
    assert_eq!(
        got.get("s.merged").map(Vec::as_slice),
        Some(&["c".to_string()][..]),
        "{got:?}"
    );
    assert_eq!(
        got.get("s.kpos").map(Vec::as_slice),
        Some(&["x".to_string()][..]),
        "{got:?}"
    );
    assert!(!got.contains_key("s.kpos_y"), "{got:?}");
    for whole in ["s.deleted", "s.staged", "s.pos", "s.pos_reader"] {
        assert_eq!(
            got.get(whole).map(Vec::as_slice),
            Some(&["*".to_string()][..]),
            "{whole}: {got:?}"
        );
    }
}

/// A random layered warehouse: table `t{i}` (columns c0, c1, c2) is built
/// from one or two earlier tables; each output column reads some input
/// columns, and a join key and a filter read others.
#[derive(Debug, Clone)]
struct Table {
    /// Upstream tables (1 or 2).
    from: Vec<usize>,
    /// Per output column, the (upstream position, column) pairs it reads.
    outputs: [Vec<(usize, usize)>; 3],
    /// Columns that decide rows: (upstream position, column).
    conditions: Vec<(usize, usize)>,
}

fn table(i: usize) -> impl Strategy<Value = Table> {
    let ups = prop::collection::btree_set(0..i, 1..=2.min(i));
    ups.prop_flat_map(|ups| {
        let from: Vec<usize> = ups.into_iter().collect();
        let n = from.len();
        let col = (0..n, 0..3usize);
        (
            Just(from),
            [
                prop::collection::vec(col.clone(), 0..3),
                prop::collection::vec(col.clone(), 0..3),
                prop::collection::vec(col.clone(), 0..3),
            ],
            prop::collection::vec(col, 0..2),
        )
    })
    .prop_map(|(from, outputs, conditions)| Table {
        from,
        outputs,
        conditions,
    })
}

fn warehouse() -> impl Strategy<Value = Vec<Table>> {
    (2usize..9).prop_flat_map(|n| (1..n).map(table).collect::<Vec<_>>())
}

/// The job of table `i`: `u0`, `u1` alias its upstreams.
fn sql(i: usize, t: &Table) -> String {
    let col = |(u, c): (usize, usize)| format!("u{u}.c{c}");
    let outputs: Vec<String> = t
        .outputs
        .iter()
        .enumerate()
        .map(|(k, reads)| {
            let expr = if reads.is_empty() {
                "0".to_string()
            } else {
                reads
                    .iter()
                    .map(|&r| col(r))
                    .collect::<Vec<_>>()
                    .join(" + ")
            };
            format!("{expr} as c{k}")
        })
        .collect();
    let mut from = format!("s.t{} u0", t.from[0]);
    if t.from.len() == 2 {
        from.push_str(&format!(" cross join s.t{} u1", t.from[1]));
    }
    let filter = if t.conditions.is_empty() {
        String::new()
    } else {
        let c: Vec<String> = t
            .conditions
            .iter()
            .map(|&r| format!("{} > 0", col(r)))
            .collect();
        format!(" where {}", c.join(" and "))
    };
    format!(
        "create table s.t{i} as select {} from {from}{filter}",
        outputs.join(", ")
    )
}

/// The oracle: which tables the wrong column `bad` of t0 reaches, and with
/// which columns (`None`: all, a condition read it).
fn oracle(tables: &[Table], bad: usize) -> BTreeMap<usize, Option<BTreeSet<usize>>> {
    let mut hit: BTreeMap<usize, Option<BTreeSet<usize>>> = BTreeMap::new();
    hit.insert(0, Some(BTreeSet::from([bad])));
    // Tables are in topological order: one pass suffices.
    for (k, t) in tables.iter().enumerate() {
        let i = k + 1;
        let wrong = |(u, c): (usize, usize)| match hit.get(&t.from[u]) {
            Some(None) => true,
            Some(Some(cols)) => cols.contains(&c),
            None => false,
        };
        // An upstream whose rows may change changes this one's rows; a
        // wrong column that decides rows does too.
        let rows_changed = t.from.iter().any(|u| matches!(hit.get(u), Some(None)));
        if rows_changed || t.conditions.iter().any(|&r| wrong(r)) {
            hit.insert(i, None);
            continue;
        }
        let cols: BTreeSet<usize> = (0..3)
            .filter(|&o| t.outputs[o].iter().any(|&r| wrong(r)))
            .collect();
        if !cols.is_empty() {
            hit.insert(i, Some(cols));
        }
    }
    hit
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48),
        ..ProptestConfig::default()
    })]

    #[test]
    fn pruned_impact_is_exactly_what_the_columns_reach(tables in warehouse(), bad in 0usize..3) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("jobs")).unwrap();
        std::fs::write(
            dir.path().join("ripple.yml"),
            "dialect: postgres\nmodels: [jobs]\ndatasets:\n  s.t0: { grain: day, start: 2026-01-01 }\n",
        ).unwrap();
        std::fs::write(dir.path().join("jobs/t0.sql"), "create table s.t0 as select c0, c1, c2 from s.src").unwrap();
        for (k, t) in tables.iter().enumerate() {
            std::fs::write(dir.path().join(format!("jobs/t{}.sql", k + 1)), sql(k + 1, t)).unwrap();
        }
        let g = graph(dir.path());
        let bad_name = format!("c{bad}");
        let pruned = affected(&g, &request("s.t0", &[&bad_name]));
        let unpruned = affected(&g, &request("s.t0", &[]));
        // Pruned ⊆ unpruned.
        for name in pruned.keys() {
            prop_assert!(unpruned.contains_key(name), "{name} only when pruned");
        }
        // Exactly the oracle's tables, with its columns.
        let want: BTreeMap<String, Vec<String>> = oracle(&tables, bad)
            .into_iter()
            .map(|(i, cols)| {
                let cols = match cols {
                    _ if i == 0 => vec![bad_name.clone()],
                    None => vec!["*".to_string()],
                    Some(c) => c.iter().map(|c| format!("c{c}")).collect(),
                };
                (format!("s.t{i}"), cols)
            })
            .collect();
        prop_assert_eq!(pruned, want, "{:#?}", tables.iter().enumerate().map(|(k, t)| sql(k + 1, t)).collect::<Vec<_>>());
    }
}

#[test]
fn the_plan_recomputes_only_the_pruned_datasets_and_the_cli_shows_columns() {
    let run = |format: &str| {
        let out = assert_cmd::Command::cargo_bin("ripple")
            .unwrap()
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
                "--columns",
                "amount",
                "--format",
                format,
            ])
            .args(["--project", "fixtures/worked_example/declared"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let doc: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    let datasets: BTreeSet<&str> = doc["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["dataset"].as_str().unwrap())
        .collect();
    assert_eq!(
        datasets,
        BTreeSet::from([
            "model.monthly_kpis",
            "model.orders_7d",
            "model.stg_orders",
            "model.weekly_revenue"
        ])
    );
    let text = assert_cmd::Command::cargo_bin("ripple")
        .unwrap()
        .args([
            "impact",
            "raw.orders",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-12",
        ])
        .args(["--as-of", "2026-02-01", "--columns", "amount", "--explain"])
        .args(["--project", "fixtures/worked_example/declared"])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("3 downstream datasets read none of them"),
        "{text}"
    );
    assert!(text.contains("orders_7d: revenue_7d"), "{text}");
    assert!(
        text.contains("orders_7d: columns: `stg_orders`: its columns amount become revenue_7d"),
        "{text}"
    );
}

#[path = "support/engines.rs"]
mod engines;

/// Jobs that read a whole row through its alias, or join on every shared
/// column, each run on DuckDB on good data and on data where only
/// `amount` differs: the engine says which outputs really change, and
/// `--columns amount` must reach each of them (round 26 left these out:
/// `md5(o::text)`, `to_json(o)`, `group by o`, `natural join`).
#[test]
fn column_impact_reaches_every_table_whose_rows_the_engine_changes() {
    let Some(duck) = engines::require(engines::duckdb(), "duckdb") else {
        return;
    };
    let jobs: [(&str, &str); 7] = [
        // A table function given a column decides how many rows come out.
        (
            "s.series",
            "select o.order_id, g.i from s.orders o, range(o.amount) g(i)",
        ),
        (
            "s.hashed",
            "select order_date, md5(cast(o as varchar)) as h from s.orders o",
        ),
        (
            "s.as_json",
            "select order_date, to_json(o) as j from s.orders o",
        ),
        (
            "s.by_row",
            "select count(*) as n from s.orders o group by o",
        ),
        (
            "s.natural",
            "select order_date, note from s.orders natural join s.adj",
        ),
        ("s.ids", "select order_id, order_date from s.orders"),
        (
            "s.starred",
            "select order_date, to_json(struct_pack(a := o.amount)) as j from s.orders o",
        ),
    ];
    let setup = |amount_shift: i32| {
        format!(
            "create schema if not exists s;\n\
             create or replace table s.orders (order_id int, order_date date, amount int);\n\
             insert into s.orders values (1, date '2026-01-10', {}), (2, date '2026-01-10', 7);\n\
             create or replace table s.adj (order_id int, amount int, note varchar);\n\
             insert into s.adj values (1, 5, 'matched'), (2, 7, 'also');\n",
            5 + amount_shift
        )
    };
    // The engine's truth: which jobs' outputs differ when `amount` does.
    let mut changed = BTreeSet::new();
    for (table, query) in jobs {
        let out = |shift: i32| {
            duck.run(&format!(
                "{}select * from ({query}) q order by all;",
                setup(shift)
            ))
            .unwrap()
        };
        if out(0) != out(1) {
            changed.insert(table.to_string());
        }
    }
    assert!(changed.contains("s.natural") && changed.contains("s.hashed"));
    assert!(changed.contains("s.series"), "{changed:?}");
    assert!(!changed.contains("s.ids"), "{changed:?}");
    // ripple's answer, the tables declared as the engine has them.
    let got = reached_by_amount(
        "create table s.orders (order_id int, order_date date, amount int);\ncreate table s.adj (order_id int, amount int, note varchar);\n",
        jobs.iter()
            .map(|(table, query)| format!("create table {table} as {query};\n")),
    );
    for table in &changed {
        assert!(
            got.contains_key(table),
            "{table} changed on the engine: {got:?}"
        );
    }
}

/// What `s.orders`' wrong `amount` reaches in a DuckDB project of `jobs`
/// (one file each), its tables declared by `ddl`.
fn reached_by_amount(
    ddl: &str,
    jobs: impl Iterator<Item = String>,
) -> BTreeMap<String, Vec<String>> {
    let dir = tempfile::tempdir().unwrap();
    let mut files: Vec<(String, String)> = vec![
        (
            "ripple.yml".into(),
            "dialect: duckdb\nmodels: [jobs]\ntables: [ddl]\ndatasets:\n  s.orders: { grain: day, start: 2026-01-01 }\n".into(),
        ),
        ("ddl/t.sql".into(), ddl.to_string()),
    ];
    files.extend(
        jobs.enumerate()
            .map(|(i, job)| (format!("jobs/j{i}.sql"), job)),
    );
    for (p, t) in &files {
        let path = dir.path().join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, t).unwrap();
    }
    let g = graph(dir.path());
    affected(&g, &request("s.orders", &["amount"]))
}

#[test]
fn columns_matched_by_name_or_chosen_by_pattern_are_followed_downstream() {
    // Round 28: `union all by name` and `insert ... by name` were followed
    // by position (the wrong column reached the next job) and
    // `columns('re')` read nothing: the readers two steps down were left
    // out, exit 0.
    let Some(duck) = engines::require(engines::duckdb(), "duckdb") else {
        return;
    };
    let jobs: [(&str, &str); 6] = [
        (
            "s.both",
            "create table s.both as select order_date, order_id, amount * 1 as amt, 'm' as note from s.orders where order_id = 1 \
             union all by name select 's' as note, amount as amt, order_id, order_date from s.orders where order_id = 2;",
        ),
        (
            "s.both_daily",
            "create table s.both_daily as select order_date, sum(amt) as amt from s.both group by all;",
        ),
        (
            "s.ins",
            "create table s.ins (order_date date, order_id int, amt int, note varchar);\n\
             insert into s.ins by name select 'n' as note, amount as amt, order_id, order_date from s.orders;",
        ),
        (
            "s.ins_daily",
            "create table s.ins_daily as select order_date, sum(amt) as amt from s.ins group by all;",
        ),
        (
            "s.piv",
            "create table s.piv as select order_date, sum(amount) filter (where order_id = 1) as a1, \
             sum(amount) filter (where order_id = 2) as a2 from s.orders group by all;",
        ),
        (
            "s.best",
            "create table s.best as select order_date, max(columns('a\\d')) from s.piv group by all;",
        ),
    ];
    let run = |shift: i32| {
        let mut sql = format!(
            "drop schema if exists s cascade;\ncreate schema s;\ncreate table s.orders (order_id int, order_date date, amount int);\n\
             insert into s.orders values (1, date '2026-01-10', {}), (2, date '2026-01-10', 7);\n",
            5 + shift
        );
        for (_, job) in jobs {
            sql.push_str(job);
            sql.push('\n');
        }
        for (table, _) in jobs {
            sql.push_str(&format!("select '{table}', * from {table} order by all;\n"));
        }
        duck.run(&sql).unwrap()
    };
    let (good, bad) = (run(0), run(1));
    let rows = |out: &str, table: &str| -> Vec<String> {
        // `-list` output: the table's name, then `|`.
        out.lines()
            .filter(|l| l.starts_with(&format!("{table}|")))
            .map(str::to_string)
            .collect()
    };
    let changed: Vec<&str> = jobs
        .iter()
        .map(|(t, _)| *t)
        .filter(|t| rows(&good, t) != rows(&bad, t))
        .collect();
    assert!(
        changed.contains(&"s.best") && changed.contains(&"s.ins_daily"),
        "{changed:?}"
    );
    let got = reached_by_amount(
        "create table s.orders (order_id int, order_date date, amount int);\n",
        jobs.iter().map(|(_, job)| format!("{job}\n")),
    );
    for table in &changed {
        assert!(
            got.contains_key(*table),
            "{table} changed on the engine: {got:?}"
        );
    }
}
