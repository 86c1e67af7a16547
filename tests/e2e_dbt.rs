//! The dbt executor end to end on a stock dbt project, on dbt-duckdb and
//! dbt-postgres (`scripts/engines.sh`), never a mock.
//!
//! The project has no macro of ripple's, its own `generate_schema_name`, a
//! model in a custom schema, a seed, an ephemeral model, a view, tables and
//! incremental models of every strategy both adapters run (microbatch,
//! merge, delete+insert, append), and an `on-run-end` hook. Production is
//! built over a bad load of `raw.orders`, the load is fixed, ripple plans
//! the backfill with a shadow pattern other than the default, and the plan
//! runs: first with a model that fails in the warehouse, then with a
//! failing dbt test (production must be as it was each time), then as is.
//! Every model must then equal, row for row, the project built from
//! scratch on the good data; the user's folder must be as it was, the hook
//! must not have run, and no shadow may be left.

#[path = "support/engines.rs"]
mod engines;
#[path = "support/temp_project.rs"]
mod temp_project;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use engines::{Duck, Pg, duckdb, duckdb_file, postgres, require};
use temp_project::copy_tree;

/// A warehouse dbt and the plan run on.
enum Warehouse {
    Duck(Duck),
    Pg(Pg),
}

impl Warehouse {
    fn run(&self, sql: &str) -> Result<String, String> {
        match self {
            Warehouse::Duck(d) => d.run(sql),
            Warehouse::Pg(p) => p.run(sql),
        }
    }

    fn sql_command(&self) -> String {
        match self {
            Warehouse::Duck(d) => d.sql_command(),
            Warehouse::Pg(p) => p.psql_command(),
        }
    }

    fn adapter(&self) -> &'static str {
        match self {
            Warehouse::Duck(_) => "duckdb",
            Warehouse::Pg(_) => "postgres",
        }
    }

    fn schema(&self) -> &'static str {
        match self {
            Warehouse::Duck(_) => "main",
            Warehouse::Pg(_) => "public",
        }
    }

    /// `profiles.yml` for the project `stock` on this warehouse.
    /// The profile's default target is a developer's (`dev`: another
    /// DuckDB file, another PostgreSQL schema); production is `prod`, which
    /// ripple.yml names.
    fn profile(&self) -> String {
        let (prod, dev) = match self {
            Warehouse::Duck(d) => {
                let path = |p: &Path| serde_json::to_string(&p.to_string_lossy()).unwrap();
                let dev = d.path().with_extension("dev.duckdb");
                (
                    format!(
                        "type: duckdb\n      path: {}\n      schema: main",
                        path(d.path())
                    ),
                    format!(
                        "type: duckdb\n      path: {}\n      schema: main",
                        path(&dev)
                    ),
                )
            }
            Warehouse::Pg(p) => (p.dbt_target("public"), p.dbt_target("dev")),
        };
        format!(
            "stock:\n  target: dev\n  outputs:\n    prod:\n      {prod}\n      threads: 1\n    dev:\n      {dev}\n      threads: 1\n"
        )
    }

    /// Every row of `relation`, its columns in name order (production's
    /// column order may differ from the model's), one line each, sorted.
    fn rows(&self, relation: &str) -> String {
        let (schema, table) = relation.split_once('.').unwrap();
        let columns = self
            .run(&format!(
                "select column_name from information_schema.columns \
                 where table_schema = '{schema}' and table_name = '{table}' order by column_name"
            ))
            .unwrap();
        let list = columns.lines().collect::<Vec<_>>().join(", ");
        assert!(!list.is_empty(), "{relation} has no columns");
        let sql = match self {
            Warehouse::Duck(_) => format!("select {list} from {relation} order by all"),
            Warehouse::Pg(_) => {
                format!("select t::text from (select {list} from {relation}) t order by 1")
            }
        };
        self.run(&sql).unwrap_or_else(|e| panic!("{relation}: {e}"))
    }

    /// Tables and views whose schema or name says they are shadows.
    fn shadows_left(&self) -> String {
        self.run(
            "select table_schema || '.' || table_name from information_schema.tables \
             where table_schema not in ('pg_catalog', 'information_schema') \
             and (table_schema = 'backfill' or table_name like '%shadow%') order by 1",
        )
        .unwrap()
    }
}

/// `raw.orders`: three orders a day for January and February 2026, the
/// amounts of 2026-01-10..2026-01-12 a hundred times too big when `bad`.
fn raw_orders(bad: bool) -> String {
    let mut sql = String::from(
        "create schema if not exists raw;\ndrop table if exists raw.orders;\n\
         create table raw.orders (order_id integer, customer_id integer, ordered_at timestamp, amount numeric(12,2), status varchar);\n",
    );
    let mut values = Vec::new();
    let mut id = 0;
    for day in 0..59 {
        for k in 0..3 {
            id += 1;
            let date = jiff_date(day);
            let mut amount = 10 + (id * 7) % 40;
            if bad && (9..12).contains(&day) {
                amount *= 100;
            }
            let status = if id % 11 == 0 { "cancelled" } else { "ok" };
            values.push(format!(
                "({id}, {}, timestamp '{date} {:02}:30:00', {amount}, '{status}')",
                1 + id % 5,
                6 + k * 5
            ));
        }
    }
    sql.push_str(&format!(
        "insert into raw.orders values {};\n",
        values.join(", ")
    ));
    sql
}

/// The date `day` days after 2026-01-01.
fn jiff_date(day: i64) -> String {
    let mut d = 1;
    let mut m = 1;
    let mut left = day;
    loop {
        let days = if m == 1 { 31 } else { 28 };
        if d + left <= days {
            return format!("2026-{m:02}-{:02}", d + left);
        }
        left -= days - d + 1;
        d = 1;
        m += 1;
    }
}

/// The project's files for `adapter` with backfill shadows named by
/// `pattern`.
fn project_files(adapter: &str, pattern: &str) -> Vec<(&'static str, String)> {
    // dbt-postgres's microbatch needs a key; dbt-duckdb's refuses one.
    let key = if adapter == "postgres" {
        ", unique_key='order_date'"
    } else {
        ""
    };
    let incremental = |strategy: &str, key: &str| {
        format!(
            "{{{{ config(materialized='incremental', incremental_strategy='{strategy}'{key}) }}}}\n\
             select order_id, customer_id, order_date, amount\nfrom {{{{ ref('stg_orders') }}}}\n\
             {{% if is_incremental() %}}\nwhere order_date > (select max(order_date) from {{{{ this }}}})\n{{% endif %}}\n"
        )
    };
    vec![
        (
            "dbt_project.yml",
            "name: stock\nversion: \"1.0.0\"\nprofile: stock\nmodel-paths: [\"models\"]\n\
             seed-paths: [\"seeds\"]\nmacro-paths: [\"macros\"]\n\
             on-run-end:\n  - \"create table if not exists {{ target.schema }}.hook_ran as select 1 as x\"\n\
             models:\n  stock:\n    +materialized: table\n"
                .to_string(),
        ),
        (
            "macros/generate_schema_name.sql",
            "{% macro generate_schema_name(custom_schema_name, node) -%}\n\
             {%- if custom_schema_name is none -%}{{ target.schema }}\
             {%- else -%}{{ custom_schema_name | trim }}{%- endif -%}\n{%- endmacro %}\n"
                .to_string(),
        ),
        (
            "models/sources.yml",
            "version: 2\nsources:\n  - name: raw\n    schema: raw\n    tables:\n      - name: orders\n"
                .to_string(),
        ),
        (
            // A test that stores its failures (in production's audit schema).
            "models/schema.yml",
            "version: 2\nmodels:\n  - name: orders_daily\n    columns:\n      - name: order_date\n        data_tests:\n          - not_null:\n              config:\n                store_failures: true\n"
                .to_string(),
        ),
        (
            // A test of a restated model, made to fail by the environment.
            "tests/revenue_is_sane.sql",
            "select * from {{ ref('orders_daily') }}\n\
             where revenue > {{ env_var('RIPPLE_REVENUE_LIMIT', '100000000') }}\n"
                .to_string(),
        ),
        (
            "seeds/segments.csv",
            "customer_id,segment\n1,gold\n2,silver\n3,gold\n4,bronze\n5,silver\n".to_string(),
        ),
        (
            "models/stg_orders.sql",
            "{{ config(materialized='view', event_time='order_date') }}\n\
             select order_id, customer_id, cast(ordered_at as date) as order_date, amount\n\
             from {{ source('raw', 'orders') }}\nwhere status <> 'cancelled'\n"
                .to_string(),
        ),
        (
            "models/orders_daily.sql",
            format!(
                "{{{{ config(materialized='incremental', incremental_strategy='microbatch', \
                 event_time='order_date', batch_size='day', begin='2026-01-01'{key}) }}}}\n\
                 select order_date, count(*) as orders, sum(amount) as revenue\n\
                 from {{{{ ref('stg_orders') }}}}\ngroup by order_date\n"
            ),
        ),
        (
            "models/orders_7d.sql",
            "select d.order_date, sum(w.revenue) as revenue_7d\nfrom {{ ref('orders_daily') }} d\n\
             join {{ ref('orders_daily') }} w\n  on w.order_date between d.order_date - 6 and d.order_date\n\
             group by d.order_date\n"
                .to_string(),
        ),
        ("models/fct_merge.sql", incremental("merge", ", unique_key='order_id'")),
        (
            "models/fct_delete_insert.sql",
            incremental("delete+insert", ", unique_key='order_id'"),
        ),
        (
            "models/fct_append.sql",
            // A warehouse error when the environment asks for one.
            incremental("append", "").replace(
                "select order_id,",
                "select {% if env_var('RIPPLE_FAIL_MODEL', '0') == '1' %}cast('boom' as integer){% else %}0{% endif %} as fault, order_id,",
            ),
        ),
        (
            "models/big_orders.sql",
            "{{ config(materialized='ephemeral') }}\nselect * from {{ ref('stg_orders') }} where amount > 30\n"
                .to_string(),
        ),
        (
            "models/big_daily.sql",
            // Production passes `--vars '{fx: 3}'`; ripple.yml says so too.
            "select order_date, count(*) * {{ var('fx', 2) }} as big_orders from {{ ref('big_orders') }} group by order_date\n"
                .to_string(),
        ),
        (
            "models/dim_customers.sql",
            "{{ config(schema='marts', post_hook=\"create table if not exists \" ~ target.schema ~ \".post_ran as select 1 as x\") }}\n\
             select o.customer_id, s.segment, count(*) as orders, sum(o.amount) as total\n\
             from {{ ref('stg_orders') }} o\njoin {{ ref('segments') }} s on s.customer_id = o.customer_id\n\
             group by o.customer_id, s.segment\n"
                .to_string(),
        ),
        (
            "ripple.yml",
            format!(
                "dialect: {adapter}\n\
                 target: {{ schema: {}, name: prod }}\n\
                 vars: {{ fx: 3 }}\n\
                 backfill:\n  shadow: \"{pattern}\"\n\
                 datasets:\n  \
                   raw.orders: {{ grain: day, start: 2026-01-01 }}\n  \
                   stg_orders: {{ grain: day, start: 2026-01-01 }}\n  \
                   orders_daily: {{ grain: day, start: 2026-01-01 }}\n  \
                   fct_merge: {{ grain: day, start: 2026-01-01 }}\n  \
                   fct_delete_insert: {{ grain: day, start: 2026-01-01 }}\n  \
                   fct_append: {{ grain: day, start: 2026-01-01 }}\n  \
                   big_daily: {{ grain: day, start: 2026-01-01, partition_column: order_date }}\n  \
                   orders_7d:\n    grain: day\n    upstream: {{ orders_daily: {{ window: [-6, 0] }} }}\n  \
                   dim_customers: {{ grain: none }}\n",
                if adapter == "postgres" { "public" } else { "main" }
            ),
        ),
    ]
}

/// The models' relations in production.
fn relations(w: &Warehouse) -> Vec<String> {
    let s = w.schema();
    [
        "stg_orders",
        "orders_daily",
        "orders_7d",
        "fct_merge",
        "fct_delete_insert",
        "fct_append",
        "big_daily",
    ]
    .iter()
    .map(|m| format!("{s}.{m}"))
    .chain(["marts.dim_customers".to_string(), "raw.orders".to_string()])
    .collect()
}

fn dump(w: &Warehouse) -> BTreeMap<String, String> {
    relations(w)
        .into_iter()
        .map(|r| (r.clone(), w.rows(&r)))
        .collect()
}

/// Every file under `dir`, with its size and modification time.
fn listing(dir: &Path) -> BTreeMap<PathBuf, (u64, std::time::SystemTime)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let meta = std::fs::symlink_metadata(e.path()).unwrap();
            if meta.is_dir() {
                stack.push(e.path());
            }
            out.insert(
                e.path().strip_prefix(dir).unwrap().to_path_buf(),
                (meta.len(), meta.modified().unwrap()),
            );
        }
    }
    out
}

/// The project, written for `w`, and a folder beside it for dbt's outputs
/// of the production builds.
struct Project {
    dir: tempfile::TempDir,
    dbt: PathBuf,
}

impl Project {
    fn new(dbt: PathBuf, w: &Warehouse, pattern: &str) -> Project {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let mut files = project_files(w.adapter(), pattern);
        files.push(("profiles.yml", w.profile()));
        for (path, text) in files {
            let p = project.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        Project { dir, dbt }
    }

    fn path(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    /// A command run in the project, as its team runs dbt there (the
    /// profile found in the current folder).
    fn command(&self, program: &Path) -> Command {
        let mut c = Command::new(program);
        c.current_dir(self.path())
            .env_remove("DBT_PROFILES_DIR")
            .env("TMPDIR", self.dir.path());
        c
    }

    /// Production's first build, from scratch: seeds, then every model
    /// (microbatch over January and February). dbt's outputs go beside
    /// the project.
    fn build(&self, w: &Warehouse) {
        for args in [
            &["seed"][..],
            &[
                "run",
                "--event-time-start",
                "2026-01-01",
                "--event-time-end",
                "2026-03-01",
                "--vars",
                "{fx: 3}",
            ],
        ] {
            let out = self
                .command(&self.dbt)
                .args(args)
                .args(["--target", "prod"])
                .env("DBT_TARGET_PATH", self.dir.path().join("prod-target"))
                .env("DBT_LOG_PATH", self.dir.path().join("prod-logs"))
                .env("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{} on {}: {}",
                args[0],
                w.adapter(),
                String::from_utf8_lossy(&out.stdout)
            );
        }
    }
}

/// Builds production over bad data and a from-scratch reference over good
/// data, plans the backfill with `pattern`, runs it, and compares.
fn backfill_matches_a_rebuild(make: impl Fn() -> Warehouse, pattern: &str) {
    let Some(dbt) = require(engines::dbt(), "dbt (dbt-duckdb, dbt-postgres)") else {
        return;
    };
    let expected_wh = make();
    expected_wh.run(&raw_orders(false)).unwrap();
    let reference = Project::new(dbt.clone(), &expected_wh, pattern);
    reference.build(&expected_wh);
    let expected = dump(&expected_wh);

    let w = make();
    w.run(&raw_orders(true)).unwrap();
    let p = Project::new(dbt, &w, pattern);
    p.build(&w);
    // Production's columns in another order than the model's (a refactor
    // since its last run): a table rebuilt whole is swapped in by name.
    let dim = "marts.dim_customers";
    w.run(&format!(
        "create table marts.dim_reordered as select total, orders, segment, customer_id from {dim}; \
         drop table {dim}; alter table marts.dim_reordered rename to dim_customers"
    ))
    .unwrap();
    // The hook runs with every production build; the backfill must not run it.
    let hook = format!("{}.hook_ran", w.schema());
    let post_hook = format!("{}.post_ran", w.schema());
    for h in [&hook, &post_hook] {
        w.run(&format!("select count(*) from {h}")).unwrap();
        w.run(&format!("drop table {h}")).unwrap();
    }
    w.run(
        "update raw.orders set amount = amount / 100 where ordered_at >= timestamp '2026-01-10 00:00:00' and ordered_at < timestamp '2026-01-13 00:00:00'",
    )
    .unwrap();
    let before = dump(&w);
    assert_ne!(before, expected, "the bad load must show");

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
        .arg(p.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}: {}",
        w.adapter(),
        String::from_utf8_lossy(&out.stderr)
    );
    let script = String::from_utf8(out.stdout).unwrap();
    assert!(
        script.contains(
            "dbt build --indirect-selection cautious --project-dir \"$RIPPLE_DBT_OVERLAY\""
        ),
        "{script}"
    );
    let plan = p.dir.path().join("plan.sh");
    std::fs::write(&plan, &script).unwrap();
    let untouched = listing(&p.path());
    let run_plan = |env: &[(&str, &str)]| {
        p.command(Path::new("bash"))
            .arg(&plan)
            .env("RIPPLE_SQL", w.sql_command())
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    p.dbt.parent().unwrap().display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            )
            .envs(env.iter().copied())
            .output()
            .unwrap()
    };
    // A model that fails in the warehouse, or a failing dbt test of a
    // restated model, stops the plan before any swap: production as it
    // was. The same plan, the fault gone, converges.
    let failed = run_plan(&[("RIPPLE_FAIL_MODEL", "1")]);
    let said = String::from_utf8_lossy(&failed.stdout);
    assert!(
        !failed.status.success() && said.contains("fct_append"),
        "{}: {said}",
        w.adapter()
    );
    assert_eq!(
        dump(&w),
        before,
        "{}: a failed model changed production",
        w.adapter()
    );
    let failed = run_plan(&[("RIPPLE_REVENUE_LIMIT", "1")]);
    let said = String::from_utf8_lossy(&failed.stdout);
    assert!(
        !failed.status.success() && said.contains("revenue_is_sane"),
        "{}: {said}",
        w.adapter()
    );
    assert_eq!(
        dump(&w),
        before,
        "{}: a failed test changed production",
        w.adapter()
    );
    let run = run_plan(&[]);
    assert!(
        run.status.success(),
        "{} with shadows `{pattern}`: {}\n{}",
        w.adapter(),
        String::from_utf8_lossy(&run.stderr),
        String::from_utf8_lossy(&run.stdout)
    );
    let after = dump(&w);
    for (relation, rows) in &expected {
        assert_eq!(
            &after[relation],
            rows,
            "{} with shadows `{pattern}`: {relation} differs from a rebuild",
            w.adapter()
        );
    }
    assert_eq!(
        listing(&p.path()),
        untouched,
        "the user's folder was written"
    );
    assert!(
        w.run(&format!("select count(*) from {hook}")).is_err(),
        "the project's on-run-end hook ran against production"
    );
    assert!(
        w.run(&format!("select count(*) from {post_hook}")).is_err(),
        "a model's post-hook ran against production"
    );
    assert_eq!(w.shadows_left(), "", "shadows left behind");
    assert_eq!(
        w.run("select count(*) from information_schema.tables where table_schema like '%dbt_test__audit'")
            .unwrap(),
        "0",
        "a test stored its failures in production's audit schema"
    );
    // The overlay is gone too.
    let overlays: Vec<_> = std::fs::read_dir(p.dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("ripple-dbt"))
        .collect();
    assert!(overlays.is_empty(), "{overlays:?}");
}

#[test]
fn a_stock_dbt_project_on_duckdb_is_backfilled_into_suffixed_shadows() {
    let Some(_) = require(duckdb(), "the DuckDB CLI") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let n = std::sync::atomic::AtomicUsize::new(0);
    backfill_matches_a_rebuild(
        || {
            let i = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Warehouse::Duck(duckdb_file(&dir.path().join(format!("w{i}.duckdb"))).unwrap())
        },
        "{schema}.{table}_shadow",
    );
}

#[test]
fn a_stock_dbt_project_on_postgres_is_backfilled_into_a_schema_of_shadows() {
    let Some(first) = require(postgres(), "PostgreSQL") else {
        return;
    };
    let first = std::cell::RefCell::new(Some(first));
    backfill_matches_a_rebuild(
        || {
            Warehouse::Pg(
                first
                    .borrow_mut()
                    .take()
                    .unwrap_or_else(|| postgres().unwrap()),
            )
        },
        "backfill.{table}",
    );
}

#[test]
fn shadow_names_reach_dbt_as_the_plan_wrote_them() {
    // dbt read the shadows from `--vars` as YAML, which folds a raw NEL into
    // a space: an alias holding one once made dbt build `orders
    // daily__backfill`, a relation the plan never names. They are now a
    // Jinja literal in the overlay: the truth is dbt's own Jinja reader.
    let Some(dbt) = require(engines::dbt(), "dbt (dbt-duckdb, dbt-postgres)") else {
        return;
    };
    let python = dbt.with_file_name("python");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/backfill_dbt"),
        &root,
    );
    let model = root.join("models/orders_daily.sql");
    let aliased = std::fs::read_to_string(&model).unwrap().replacen(
        "{{ config(",
        "{{ config(alias='orders\u{85}da\u{2028}i\u{9f}ly\u{feff}',",
        1,
    );
    std::fs::write(&model, aliased).unwrap();
    // The alias hides the key the window reads by: named here.
    let yml = root.join("ripple.yml");
    let text = std::fs::read_to_string(&yml).unwrap().replacen(
        "  orders_7d:\n",
        "  orders_7d:\n    partition_column: order_date\n",
        1,
    );
    std::fs::write(&yml, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ripple"))
        .args([
            "plan",
            "raw.orders",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-11",
        ])
        .args(["--as-of", "2026-02-01", "--no-cache", "--format", "json"])
        .arg("--project")
        .arg(&root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let shadow = doc["setup"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["dataset"] == "model.orders_daily")
        .map(|s| s["shadow"].as_str().unwrap().to_string())
        .expect("the aliased model has a shadow");
    // The overlay's macro file as the shell writes it, its table of
    // shadows read by dbt's own Jinja.
    let line = doc["dbt_overlay"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l.as_str())
        .find(|l| l.contains("ripple_overlay_macros/ripple_overlay.sql"))
        .unwrap();
    let text = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ripple_overlay_write() {{ printf '%s' \"$2\"; }}; {line}"
        ))
        .output()
        .unwrap();
    let read = Command::new(&python)
        .arg("-c")
        .arg("import sys, json, jinja2\nt = sys.argv[1]\nstart = t.index('{%- do return(') + len('{%- do return(')\nv = jinja2.Environment().compile_expression(t[start:t.index(') -%}', start)])()['orders_daily']\nprint(json.dumps(v['schema'] + '.\"' + v['identifier'] + '\"'))")
        .arg(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(&text.stdout))
        .output()
        .unwrap();
    assert!(
        read.status.success(),
        "{}",
        String::from_utf8_lossy(&read.stderr)
    );
    let read: String = serde_json::from_slice(&read.stdout).unwrap();
    assert_eq!(read, shadow);
}

/// A dbt Python model (dbt-duckdb runs them) restated by the dbt executor:
/// its `dbt.ref()` must read the restated upstream's shadow through the
/// overlay, and the swapped table must equal the model built from scratch
/// on the good data (the oracle is dbt on DuckDB, not a typed value).
#[test]
fn a_python_model_is_restated_through_the_overlay() {
    let python = "def model(dbt, session):\n    dbt.config(materialized=\"table\")\n    orders = dbt.ref(\"stg_orders\")\n    return orders.aggregate(\"order_date, sum(amount) as revenue\")\n";
    restated_like_a_rebuild(
        &[("models/py_revenue.py", python)],
        None,
        "select order_date, revenue from main.py_revenue order by 1",
        "--select path:models/py_revenue.py",
    );
}

/// A dbt model reading, through `source()`, a table a SQL job of the same
/// ripple project makes: the plan restates both, and dbt read production's
/// table, not its shadow, so the bad rows were swapped back (exit 0).
#[test]
fn a_source_a_sql_job_restates_is_read_from_its_shadow() {
    let sources = "version: 2\nsources:\n  - name: raw\n    schema: raw\n    tables:\n      - name: orders\n  - name: jobs\n    schema: main\n    tables:\n      - name: enriched\n";
    let job = "create or replace table main.enriched as\nselect order_id, customer_id, cast(ordered_at as date) as order_date, amount * 2 as amount2\nfrom raw.orders;\n";
    restated_like_a_rebuild(
        &[
            ("models/sources.yml", sources),
            ("jobs/enriched.sql", job),
            (
                "models/enriched_daily.sql",
                "{{ config(materialized='table') }}\nselect order_date, sum(amount2) as amount2 from {{ source('jobs', 'enriched') }} group by order_date\n",
            ),
        ],
        Some(job),
        "select order_date, amount2 from main.enriched_daily order by 1",
        "ripple_overlay__sources",
    );
}

/// A model's body that reads through `run_query` and a `statement` block
/// (as dbt_utils' helpers do) restates as a rebuild does: the overlay's
/// masks pass reads, and the materializations' own statements.
#[test]
fn reads_in_a_model_body_pass_the_overlay() {
    let model = "{{ config(materialized='table') }}\n{% if execute %}{% set top = run_query(\"select max(customer_id) as m from \" ~ ref('stg_orders')) %}{% call statement('n', fetch_result=True) %}-- how many; not a delete\nselect count(*) from {{ ref('stg_orders') }} where status_text <> 'insert into x'{% endcall %}{% endif %}\nselect customer_id, sum(amount) as total from {{ ref('stg_orders') }} group by customer_id\n";
    restated_like_a_rebuild(
        &[(
            "models/customer_totals.sql",
            &model.replace("status_text", "customer_id::varchar"),
        )],
        None,
        "select customer_id, total from main.customer_totals order by 1",
        "ripple_overlay__read_only",
    );
}

/// A model's body that writes through `run_query` (an audit insert) would
/// write production during the backfill, before any swap: the task stops
/// before the model is compiled, and production keeps every row.
#[test]
fn a_write_in_a_model_body_stops_the_task() {
    let model = "{{ config(materialized='table') }}\n{% if execute %}{% do run_query(\"create table if not exists main.audit (what varchar); insert into main.audit values ('built')\") %}{% endif %}\nselect customer_id, sum(amount) as total from {{ ref('stg_orders') }} group by customer_id\n";
    backfilled(
        &[("models/customer_totals.sql", model)],
        None,
        "select (select count(*) from main.audit), (select sum(total) from main.customer_totals), (select sum(revenue) from main.orders_daily)",
        "ripple_overlay__read_only",
        Some("ripple: run_query in the body of customer_totals runs SQL that may write"),
    );
}

/// `fixtures/backfill_dbt` with `files` added (and `job`, run before dbt,
/// listed as `sql: [jobs]`): production built on a bad load that is then
/// fixed, restated by `ripple plan --executor dbt` (whose script holds
/// `expect`), must answer `query` as dbt's build from scratch on the good
/// load does, row for row, with no shadow left.
fn restated_like_a_rebuild(files: &[(&str, &str)], job: Option<&str>, query: &str, expect: &str) {
    backfilled(files, job, query, expect, None);
}

/// [`restated_like_a_rebuild`], or, with `stops`, a run that must fail
/// saying so and leave `query`'s answer in production as it was.
fn backfilled(
    files: &[(&str, &str)],
    job: Option<&str>,
    query: &str,
    expect: &str,
    stops: Option<&str>,
) {
    let (Some(dbt), Some(_)) = (
        require(engines::dbt(), "dbt (dbt-duckdb)"),
        require(duckdb(), "the DuckDB CLI"),
    ) else {
        return;
    };
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/backfill_dbt");
    let raw = "create schema raw; create table raw.orders as select i as order_id, i % 5 as customer_id, timestamp '2026-01-01' + to_days(cast(i / 4 as integer)) as ordered_at, cast(10 + i as decimal(12, 2)) as amount, 'ok' as status from range(0, 240) t(i)";
    let bad = "update raw.orders set amount = amount / 100 where ordered_at >= timestamp '2026-01-10' and ordered_at < timestamp '2026-01-13'";
    let fixed = "update raw.orders set amount = amount * 100 where ordered_at >= timestamp '2026-01-10' and ordered_at < timestamp '2026-01-13'";
    let dir = tempfile::tempdir().unwrap();
    let project = |name: &str| {
        let p = dir.path().join(name);
        copy_tree(&fixture, &p);
        for (file, text) in files {
            let path = p.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        if job.is_some() {
            let yml = p.join("ripple.yml");
            let text = std::fs::read_to_string(&yml).unwrap();
            std::fs::write(&yml, format!("{text}sql: [jobs]\n")).unwrap();
        }
        p
    };
    let build = |p: &Path, db: &Path, w: &Duck| {
        if let Some(job) = job {
            w.run(job).unwrap();
        }
        let out = Command::new(&dbt)
            .args(["build", "--profiles-dir", ".", "--project-dir", "."])
            .current_dir(p)
            .env("RIPPLE_DUCKDB_PATH", db)
            .env("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    };
    // The oracle: built from scratch on the good data.
    let good_db = dir.path().join("good.duckdb");
    let good = duckdb_file(&good_db).unwrap();
    good.run(raw).unwrap();
    build(&project("good"), &good_db, &good);
    let expected = good.run(query).unwrap();
    // Production: built on the bad load, which is then fixed.
    let prod_db = dir.path().join("prod.duckdb");
    let prod = duckdb_file(&prod_db).unwrap();
    prod.run(raw).unwrap();
    prod.run(bad).unwrap();
    let p = project("prod");
    build(&p, &prod_db, &prod);
    prod.run(fixed).unwrap();
    assert_ne!(prod.run(query).unwrap(), expected, "the bad load must show");
    let plan = Command::new(env!("CARGO_BIN_EXE_ripple"))
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
            "2026-03-01",
            "--executor",
            "dbt",
            "--format",
            "shell",
        ])
        .arg("--project")
        .arg(&p)
        .output()
        .unwrap();
    assert!(
        plan.status.success(),
        "{}",
        String::from_utf8_lossy(&plan.stderr)
    );
    let script = String::from_utf8(plan.stdout).unwrap();
    assert!(script.contains(expect), "{script}");
    std::fs::write(dir.path().join("plan.sh"), &script).unwrap();
    let before = prod.run(query).unwrap();
    let run = Command::new("bash")
        .arg(dir.path().join("plan.sh"))
        .current_dir(&p)
        .env("RIPPLE_SQL", prod.sql_command())
        .env("RIPPLE_DUCKDB_PATH", &prod_db)
        .env("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
        .env(
            "PATH",
            format!(
                "{}:{}",
                dbt.parent().unwrap().display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .output()
        .unwrap();
    let said = format!(
        "{}\n{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    if let Some(message) = stops {
        assert!(!run.status.success(), "{said}");
        assert!(said.contains(message), "{said}");
        assert_eq!(prod.run(query).unwrap(), before, "production untouched");
        return;
    }
    assert!(run.status.success(), "{said}");
    assert_eq!(prod.run(query).unwrap(), expected, "row for row");
    let left = prod
        .run("select count(*) from information_schema.tables where table_name like '%backfill%'")
        .unwrap();
    assert_eq!(left.trim(), "0", "no shadow left");
}
