//! Statement lineage, construct by construct and dialect by dialect.
//!
//! Each case states the statement-level reads and writes (the last statement
//! of the script when it has several) and, where it matters, the script
//! roll-up. These go beyond the shared conformance file on purpose.

use ripple::sql::{SqlDialect, StatementKind, script_lineage};

/// Lineage of the script's only (or last) statement: (kind, sources, targets).
fn last(sql: &str, dialect: &str) -> (StatementKind, Vec<String>, Vec<String>) {
    let d: SqlDialect = dialect.parse().unwrap();
    let lineage = script_lineage(sql, d);
    assert!(
        lineage.errors.is_empty(),
        "{dialect}: {sql}\nerrors: {:?}",
        lineage.errors
    );
    let s = lineage.statements.last().expect("a statement");
    (s.kind, s.sources.clone(), s.targets.clone())
}

fn check(dialect: &str, sql: &str, sources: &[&str], targets: &[&str]) {
    let (_, got_sources, got_targets) = last(sql, dialect);
    assert_eq!(got_sources, sources, "sources of [{dialect}] {sql}");
    assert_eq!(got_targets, targets, "targets of [{dialect}] {sql}");
}

fn kind(dialect: &str, sql: &str) -> StatementKind {
    last(sql, dialect).0
}

// --- joins --------------------------------------------------------------

#[test]
fn every_join_kind_reads_both_sides() {
    for join in [
        "JOIN",
        "INNER JOIN",
        "LEFT JOIN",
        "LEFT OUTER JOIN",
        "RIGHT JOIN",
        "FULL OUTER JOIN",
        "CROSS JOIN",
    ] {
        let on = if join == "CROSS JOIN" {
            ""
        } else {
            " ON a.k = b.k"
        };
        let sql = format!("SELECT * FROM s.a {join} s.b{on}");
        check("postgres", &sql, &["s.a", "s.b"], &[]);
    }
}

#[test]
fn natural_semi_and_anti_joins() {
    check(
        "postgres",
        "SELECT * FROM a NATURAL JOIN b",
        &["a", "b"],
        &[],
    );
    check(
        "spark",
        "SELECT * FROM a LEFT SEMI JOIN b ON a.k = b.k LEFT ANTI JOIN c ON a.k = c.k",
        &["a", "b", "c"],
        &[],
    );
}

#[test]
fn comma_and_using_joins() {
    check(
        "mysql",
        "SELECT * FROM db1.t1, db2.t2 JOIN db3.t3 USING (id) WHERE t1.id = t2.id",
        &["db1.t1", "db2.t2", "db3.t3"],
        &[],
    );
}

#[test]
fn lateral_subqueries_and_joins() {
    check(
        "postgres",
        "SELECT * FROM users u, LATERAL (SELECT * FROM orders o WHERE o.user_id = u.id LIMIT 3) recent",
        &["orders", "users"],
        &[],
    );
    check(
        "postgres",
        "SELECT * FROM users u LEFT JOIN LATERAL (SELECT max(ts) FROM events e WHERE e.uid = u.id) x ON true",
        &["events", "users"],
        &[],
    );
}

#[test]
fn parenthesised_joins() {
    check(
        "generic",
        "SELECT * FROM (a JOIN b ON a.k = b.k) LEFT JOIN c ON c.k = a.k",
        &["a", "b", "c"],
        &[],
    );
}

// --- subqueries -------------------------------------------------------

#[test]
fn subqueries_in_every_clause() {
    check(
        "generic",
        "SELECT (SELECT max(x) FROM s1) AS m, CASE WHEN EXISTS (SELECT 1 FROM s2) THEN 1 ELSE (SELECT 0 FROM s3) END \
         FROM t WHERE k IN (SELECT k FROM s4) AND v > ANY (SELECT v FROM s5) \
         GROUP BY k HAVING count(*) > (SELECT count(*) FROM s6)",
        &["s1", "s2", "s3", "s4", "s5", "s6", "t"],
        &[],
    );
}

#[test]
fn subqueries_in_join_conditions_and_order_by() {
    check(
        "postgres",
        "SELECT * FROM a JOIN b ON b.k = a.k AND b.v IN (SELECT v FROM c) ORDER BY (SELECT 1 FROM d LIMIT 1)",
        &["a", "b", "c", "d"],
        &[],
    );
}

#[test]
fn not_exists_and_nested_derived_tables() {
    check(
        "snowflake",
        "SELECT * FROM (SELECT * FROM (SELECT * FROM raw.deep) x) y WHERE NOT EXISTS (SELECT 1 FROM raw.excl e WHERE e.id = y.id)",
        &["raw.deep", "raw.excl"],
        &[],
    );
}

// --- set operations ---------------------------------------------------

#[test]
fn set_operations_read_every_branch() {
    check(
        "bigquery",
        "SELECT id FROM `p.d.a` UNION DISTINCT SELECT id FROM `p.d.b` EXCEPT DISTINCT SELECT id FROM `p.d.c`",
        &["p.d.a", "p.d.b", "p.d.c"],
        &[],
    );
    check(
        "duckdb",
        "(SELECT 1 FROM x) UNION ALL BY NAME (SELECT 2 FROM y)",
        &["x", "y"],
        &[],
    );
}

// --- CTEs -------------------------------------------------------------

#[test]
fn cte_names_are_never_tables() {
    check(
        "generic",
        "WITH a AS (SELECT * FROM src), b AS (SELECT * FROM a) SELECT * FROM b JOIN a USING (id)",
        &["src"],
        &[],
    );
}

#[test]
fn a_cte_shadowing_a_table_reads_the_table_inside_its_own_body() {
    // Non-recursive: inside its body, `orders` is still the table.
    check(
        "postgres",
        "WITH orders AS (SELECT * FROM orders WHERE NOT deleted) SELECT * FROM orders",
        &["orders"],
        &[],
    );
    // The shadow covers later CTEs and the body, but not a qualified name.
    check(
        "postgres",
        "WITH orders AS (SELECT 1) SELECT * FROM orders JOIN public.orders p ON true",
        &["public.orders"],
        &[],
    );
}

#[test]
fn a_cte_is_not_visible_before_it_is_defined() {
    check(
        "generic",
        "WITH a AS (SELECT * FROM b), b AS (SELECT * FROM base) SELECT * FROM a",
        &["b", "base"],
        &[],
    );
}

#[test]
fn recursive_ctes_see_themselves() {
    check(
        "postgres",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 10) SELECT * FROM r",
        &[],
        &[],
    );
}

#[test]
fn ctes_nested_in_subqueries_are_scoped() {
    check(
        "generic",
        "SELECT * FROM (WITH x AS (SELECT * FROM inner_src) SELECT * FROM x) q JOIN x ON true",
        &["inner_src", "x"],
        &[],
    );
    check(
        "snowflake",
        "SELECT * FROM t WHERE id IN (WITH ids AS (SELECT id FROM s) SELECT id FROM ids)",
        &["s", "t"],
        &[],
    );
}

#[test]
fn cte_names_follow_identifier_case() {
    check(
        "postgres",
        "WITH Recent AS (SELECT * FROM src) SELECT * FROM RECENT",
        &["src"],
        &[],
    );
}

// --- INSERT -----------------------------------------------------------

#[test]
fn insert_forms() {
    check(
        "generic",
        "INSERT INTO mart.t SELECT * FROM stg.t",
        &["stg.t"],
        &["mart.t"],
    );
    check(
        "mysql",
        "INSERT INTO t (a, b) VALUES (1, 2), (3, 4)",
        &[],
        &["t"],
    );
    check(
        "postgres",
        "INSERT INTO t WITH c AS (SELECT * FROM s) SELECT * FROM c",
        &["s"],
        &["t"],
    );
    check(
        "postgres",
        "WITH c AS (SELECT * FROM s) INSERT INTO t SELECT * FROM c",
        &["s"],
        &["t"],
    );
    check(
        "postgres",
        "WITH gone AS (SELECT id FROM bans) DELETE FROM users WHERE id IN (SELECT id FROM gone)",
        &["bans"],
        &["users"],
    );
    check(
        "mysql",
        "INSERT INTO t (a) SELECT a FROM s ON DUPLICATE KEY UPDATE a = VALUES(a)",
        &["s"],
        &["t"],
    );
}

#[test]
fn insert_overwrite_with_partitions() {
    for dialect in ["hive", "spark", "databricks"] {
        check(
            dialect,
            "INSERT OVERWRITE TABLE dw.t PARTITION (dt = '2026-01-10', hr) SELECT a, hr FROM ods.s WHERE dt = '2026-01-10'",
            &["ods.s"],
            &["dw.t"],
        );
    }
    assert_eq!(
        kind("hive", "INSERT OVERWRITE TABLE t SELECT * FROM s"),
        StatementKind::InsertOverwrite
    );
    check(
        "hive",
        "INSERT INTO TABLE dw.t PARTITION (dt) SELECT * FROM ods.s",
        &["ods.s"],
        &["dw.t"],
    );
}

// --- CREATE -----------------------------------------------------------

#[test]
fn create_table_as_and_views() {
    check(
        "snowflake",
        "CREATE OR REPLACE TRANSIENT TABLE m.t AS SELECT * FROM s.a JOIN s.b USING (id)",
        &["s.a", "s.b"],
        &["m.t"],
    );
    check(
        "postgres",
        "CREATE MATERIALIZED VIEW mv AS SELECT k, count(*) FROM events GROUP BY k",
        &["events"],
        &["mv"],
    );
    check(
        "bigquery",
        "CREATE OR REPLACE VIEW `p.r.v` AS SELECT * FROM `p`.raw.users",
        &["p.raw.users"],
        &["p.r.v"],
    );
    check(
        "duckdb",
        "CREATE TABLE t AS SELECT * FROM read_parquet('x.parquet')",
        &["./x.parquet"],
        &["t"],
    );
    assert_eq!(
        kind("postgres", "CREATE VIEW v AS SELECT 1"),
        StatementKind::CreateView
    );
}

#[test]
fn create_table_like_and_clone_read_their_model() {
    check("snowflake", "CREATE TABLE t2 CLONE t1", &["t1"], &["t2"]);
    check("mysql", "CREATE TABLE t2 LIKE t1", &["t1"], &["t2"]);
}

#[test]
fn plain_create_table_writes_without_reading() {
    check(
        "postgres",
        "CREATE TABLE IF NOT EXISTS audit.log (id int, msg text)",
        &[],
        &["audit.log"],
    );
    assert_eq!(
        kind("postgres", "CREATE TABLE t (id int)"),
        StatementKind::CreateTable
    );
}

// --- MERGE, UPDATE, DELETE --------------------------------------------

#[test]
fn merge_writes_target_and_reads_source() {
    check(
        "snowflake",
        "MERGE INTO d.c t USING s.c s ON t.id = s.id WHEN MATCHED THEN UPDATE SET t.v = s.v WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)",
        &["s.c"],
        &["d.c"],
    );
    check(
        "bigquery",
        "MERGE `p.d.t` T USING (SELECT k FROM `p.d.a` UNION ALL SELECT k FROM `p.d.b`) S ON T.k = S.k WHEN NOT MATCHED THEN INSERT ROW",
        &["p.d.a", "p.d.b"],
        &["p.d.t"],
    );
    check(
        "mssql",
        "MERGE INTO dbo.target AS t USING dbo.source AS s ON t.id = s.id \
         WHEN MATCHED AND s.v IN (SELECT v FROM dbo.allowed) THEN UPDATE SET t.v = s.v;",
        &["dbo.allowed", "dbo.source"],
        &["dbo.target"],
    );
}

#[test]
fn update_forms() {
    check(
        "postgres",
        "UPDATE accounts a SET balance = b.total FROM balances b WHERE b.id = a.id",
        &["balances"],
        &["accounts"],
    );
    check(
        "generic",
        "UPDATE t SET v = (SELECT max(v) FROM s WHERE s.k = t.k) WHERE k IN (SELECT k FROM keys)",
        &["keys", "s"],
        &["t"],
    );
    check(
        "snowflake",
        "UPDATE d.t SET v = s.v FROM d.s s WHERE s.k = d.t.k",
        &["d.s"],
        &["d.t"],
    );
    // T-SQL names the target by an alias of a FROM table.
    check(
        "mssql",
        "UPDATE o SET o.status = s.status FROM dbo.orders o JOIN dbo.shipments s ON s.order_id = o.id",
        &["dbo.shipments"],
        &["dbo.orders"],
    );
    check(
        "mysql",
        "UPDATE t1 JOIN t2 ON t1.id = t2.id SET t1.v = t2.v",
        &["t2"],
        &["t1"],
    );
}

#[test]
fn delete_forms() {
    check(
        "postgres",
        "DELETE FROM sessions s USING banned b WHERE s.user_id = b.id",
        &["banned"],
        &["sessions"],
    );
    check(
        "generic",
        "DELETE FROM sessions WHERE user_id IN (SELECT id FROM banned_users)",
        &["banned_users"],
        &["sessions"],
    );
    check(
        "mysql",
        "DELETE t1 FROM t1 JOIN t2 ON t1.id = t2.id WHERE t2.bad",
        &["t2"],
        &["t1"],
    );
    check(
        "bigquery",
        "DELETE `p.d.t` WHERE k IN (SELECT k FROM `p.d.gone`)",
        &["p.d.gone"],
        &["p.d.t"],
    );
}

// --- SELECT INTO --------------------------------------------------------

#[test]
fn select_into_writes_its_target() {
    check(
        "mssql",
        "SELECT c.id INTO #recent FROM [dbo].[Customers] c WHERE c.created > '2026-01-01'",
        &["dbo.customers"],
        &["#recent"],
    );
    check(
        "postgres",
        "SELECT * INTO archive.orders_2025 FROM orders WHERE y = 2025",
        &["orders"],
        &["archive.orders_2025"],
    );
    assert_eq!(
        kind("mssql", "SELECT 1 AS x INTO ##g"),
        StatementKind::SelectInto
    );
}

#[test]
fn temp_tables_are_marked() {
    let l = script_lineage(
        "SELECT * INTO #t FROM a; CREATE TEMP TABLE u AS SELECT 1",
        SqlDialect::Generic,
    );
    assert_eq!(l.statements[0].temporary, vec!["#t"]);
    let l = script_lineage("CREATE TEMP TABLE u AS SELECT 1", SqlDialect::Postgres);
    assert_eq!(l.statements[0].temporary, vec!["u"]);
}

// --- things that are not tables ---------------------------------------

#[test]
fn table_functions_are_not_tables() {
    check(
        "postgres",
        "SELECT * FROM generate_series(1, 10) g JOIN t ON t.n = g",
        &["t"],
        &[],
    );
    check(
        "bigquery",
        "SELECT * FROM `p.d.o` o CROSS JOIN UNNEST(o.items) AS i",
        &["p.d.o"],
        &[],
    );
    check(
        "snowflake",
        "SELECT f.value FROM raw.events e, LATERAL FLATTEN(input => e.payload:items) f",
        &["raw.events"],
        &[],
    );
    check(
        "snowflake",
        "SELECT * FROM TABLE(FLATTEN(input => parse_json('[1,2]')))",
        &[],
        &[],
    );
    check(
        "postgres",
        "SELECT * FROM (VALUES (1), (2)) v(x) JOIN t ON t.x = v.x",
        &["t"],
        &[],
    );
}

#[test]
fn strings_comments_and_aliases_are_not_tables() {
    check(
        "generic",
        "/* from fake1 */ SELECT 'join fake2' AS s, t.x AS from_col -- from fake3\n FROM real_t t",
        &["real_t"],
        &[],
    );
}

// --- names ------------------------------------------------------------

#[test]
fn names_are_qualified_as_written_and_case_folded() {
    check(
        "snowflake",
        "SELECT * FROM Db.Sch.Tab JOIN \"Mixed\" ON true",
        &["Mixed", "db.sch.tab"],
        &[],
    );
    check(
        "postgres",
        "SELECT * FROM \"Sales\".orders",
        &["Sales.orders"],
        &[],
    );
    check(
        "mssql",
        "SELECT * FROM [Sales].[Orders]",
        &["sales.orders"],
        &[],
    );
    check(
        "bigquery",
        "SELECT * FROM `my-proj.raw.Orders`",
        &["my-proj.raw.Orders"],
        &[],
    );
    check(
        "mysql",
        "SELECT * FROM `shop`.`orders`",
        &["shop.orders"],
        &[],
    );
}

// --- session noise ----------------------------------------------------

#[test]
fn session_noise_yields_no_lineage_and_no_error() {
    for (dialect, sql, want) in [
        ("snowflake", "USE WAREHOUSE wh", StatementKind::Session),
        (
            "snowflake",
            "USE DATABASE analytics",
            StatementKind::Session,
        ),
        ("postgres", "SET search_path = a, b", StatementKind::Session),
        ("postgres", "BEGIN", StatementKind::Session),
        ("postgres", "COMMIT", StatementKind::Session),
        ("mssql", "BEGIN TRANSACTION", StatementKind::Session),
        (
            "snowflake",
            "ALTER SESSION SET QUERY_TAG = 'x'",
            StatementKind::Session,
        ),
        (
            "generic",
            "DROP TABLE IF EXISTS scratch.t",
            StatementKind::Drop,
        ),
        ("mysql", "USE shop", StatementKind::Session),
    ] {
        let (got, sources, targets) = last(sql, dialect);
        assert_eq!(got, want, "{sql}");
        assert!(sources.is_empty() && targets.is_empty(), "{sql}");
    }
    // TRUNCATE writes: it empties the table.
    for (dialect, sql, table) in [
        ("postgres", "TRUNCATE TABLE mart.t", "mart.t"),
        ("hive", "TRUNCATE TABLE t", "t"),
    ] {
        let (got, sources, targets) = last(sql, dialect);
        assert_eq!(got, StatementKind::Truncate, "{sql}");
        assert!(sources.is_empty(), "{sql}");
        assert_eq!(targets, [table], "{sql}");
    }
}

// --- dialect spread ----------------------------------------------------

#[test]
fn the_same_load_in_every_dialect() {
    for (name, _) in SqlDialect::ALIASES {
        check(
            name,
            "INSERT INTO mart.daily SELECT d, count(*) FROM stg.events e JOIN stg.users u ON u.id = e.uid GROUP BY d",
            &["stg.events", "stg.users"],
            &["mart.daily"],
        );
    }
}

#[test]
fn dialect_specific_syntax() {
    check(
        "clickhouse",
        "INSERT INTO db.agg SELECT k, count() FROM db.events FINAL PREWHERE k > 0 GROUP BY k",
        &["db.events"],
        &["db.agg"],
    );
    check(
        "snowflake",
        "SELECT * FROM raw.events QUALIFY row_number() OVER (PARTITION BY id ORDER BY ts DESC) = 1",
        &["raw.events"],
        &[],
    );
    check(
        "trino",
        "SELECT * FROM hive.web.clicks c CROSS JOIN UNNEST(c.tags) AS t(tag)",
        &["hive.web.clicks"],
        &[],
    );
    check(
        "redshift",
        "SELECT * FROM public.sales s JOIN public.dates d ON s.dateid = d.dateid",
        &["public.dates", "public.sales"],
        &[],
    );
    check(
        "duckdb",
        "SELECT * EXCLUDE (secret) FROM main.t1 JOIN main.t2 USING (k)",
        &["main.t1", "main.t2"],
        &[],
    );
    check(
        "postgres",
        "SELECT * FROM archive.orders UNION ALL TABLE public.orders",
        &["archive.orders", "public.orders"],
        &[],
    );
    check(
        "postgres",
        "WITH c AS (SELECT * FROM s) (TABLE c)",
        &["s"],
        &[],
    );
    check(
        "sqlite",
        "INSERT OR REPLACE INTO kv SELECT k, v FROM staging_kv",
        &["staging_kv"],
        &["kv"],
    );
}

#[test]
fn copy_statements() {
    // Files, URLs and stages are datasets named by their location.
    check(
        "postgres",
        "COPY raw.orders FROM '/tmp/orders.csv' WITH (FORMAT csv)",
        &["/tmp/orders.csv"],
        &["raw.orders"],
    );
    check(
        "postgres",
        "COPY (SELECT * FROM mart.t) TO STDOUT",
        &["mart.t"],
        &[],
    );
    check(
        "postgres",
        "COPY raw.orders FROM STDIN",
        &[],
        &["raw.orders"],
    );
    check(
        "postgres",
        "COPY mart.t TO '/exports/t.csv'",
        &["mart.t"],
        &["/exports/t.csv"],
    );
    check(
        "postgres",
        "COPY (SELECT * FROM mart.t) TO '/exports/t.csv'",
        &["mart.t"],
        &["/exports/t.csv"],
    );
    check(
        "snowflake",
        "COPY INTO raw.orders FROM @landing/orders/ FILE_FORMAT = (TYPE = CSV)",
        &["@landing/orders/"],
        &["raw.orders"],
    );
    // The stage name folds like a name; the path after it keeps its case.
    check(
        "snowflake",
        "COPY INTO raw.orders FROM @RAW.Landing/Orders/",
        &["@raw.landing/Orders/"],
        &["raw.orders"],
    );
    check(
        "snowflake",
        "COPY INTO raw.orders FROM @~/uploads/x.csv",
        &["@~/uploads/x.csv"],
        &["raw.orders"],
    );
    check(
        "snowflake",
        "COPY INTO raw.orders FROM 's3://lake/orders/' STORAGE_INTEGRATION = s3_int",
        &["s3://lake/orders/"],
        &["raw.orders"],
    );
    check(
        "snowflake",
        "COPY INTO raw.orders FROM (SELECT $1, $2 FROM @landing/orders/)",
        &["@landing/orders/"],
        &["raw.orders"],
    );
    check(
        "snowflake",
        "COPY INTO 's3://exports/x/' FROM mart.t",
        &["mart.t"],
        &["s3://exports/x/"],
    );
    check(
        "redshift",
        "UNLOAD ('select * from mart.a join mart.b using (id)') TO 's3://exports/ab_' IAM_ROLE 'r'",
        &["mart.a", "mart.b"],
        &["s3://exports/ab_"],
    );
    check(
        "hive",
        "INSERT OVERWRITE LOCAL DIRECTORY '/tmp/out' SELECT * FROM mart.t",
        &["mart.t"],
        &["/tmp/out"],
    );
    check(
        "spark",
        "INSERT INTO mart.t SELECT * FROM delta.`/mnt/lake/events` JOIN csv.`s3://x/y.csv` USING (id)",
        &["/mnt/lake/events", "s3://x/y.csv"],
        &["mart.t"],
    );
    check(
        "duckdb",
        "CREATE TABLE raw.o AS SELECT * FROM 'orders.csv'",
        &["./orders.csv"],
        &["raw.o"],
    );
    // `@x` is a variable outside Snowflake, and a backticked name with no
    // file format before it is a table.
    check(
        "mssql",
        "INSERT INTO mart.t SELECT * FROM @rows",
        &[],
        &["mart.t"],
    );
    check(
        "snowflake",
        "CREATE STAGE IF NOT EXISTS raw.landing URL = 's3://lake/landing/' STORAGE_INTEGRATION = s3_int",
        &["s3://lake/landing/"],
        &["@raw.landing"],
    );
    // Tables over files read them.
    check(
        "hive",
        "CREATE EXTERNAL TABLE raw.e (id INT) STORED AS PARQUET LOCATION 's3://lake/e/'",
        &["s3://lake/e/"],
        &["raw.e"],
    );
    check(
        "duckdb",
        "CREATE TABLE raw.e AS SELECT * FROM read_parquet('s3://lake/e/*.parquet')",
        &["s3://lake/e/*.parquet"],
        &["raw.e"],
    );
    check(
        "databricks",
        "INSERT INTO raw.e SELECT * FROM read_files('/Volumes/main/landing/e/', format => 'json')",
        &["/Volumes/main/landing/e/"],
        &["raw.e"],
    );
    // A variable set from a query reads its table (a watermark).
    check(
        "mssql",
        "DECLARE @since DATE = (SELECT MAX(day) FROM mart.daily)",
        &["mart.daily"],
        &[],
    );
    check(
        "postgres",
        "SET my.since = (SELECT max(day) FROM mart.daily)",
        &["mart.daily"],
        &[],
    );
    check("spark", "SELECT * FROM mart.`a/b`", &["mart.\"a/b\""], &[]);
}

// --- scripts ------------------------------------------------------------

#[test]
fn script_roll_up_separates_sources_targets_and_intermediates() {
    let sql = "CREATE TEMP TABLE stage AS SELECT * FROM raw.a;\n\
               INSERT INTO mart.x SELECT * FROM stage JOIN raw.b USING (id);\n\
               INSERT INTO mart.y SELECT * FROM mart.x;\n\
               CREATE TABLE scratch.tmp AS SELECT 1;\n\
               INSERT INTO mart.z SELECT * FROM scratch.tmp;\n\
               DROP TABLE scratch.tmp;";
    let l = script_lineage(sql, SqlDialect::Postgres);
    // mart.x is only appended to before it is read back: its earlier rows
    // are read too, so it is a source as well. stage and scratch.tmp are
    // created whole by the script: read back, they are internal.
    assert_eq!(l.sources, ["mart.x", "raw.a", "raw.b"]);
    // mart.x is read back, but persists: still an output of the script.
    assert_eq!(l.targets, ["mart.x", "mart.y", "mart.z"]);
    assert_eq!(l.intermediates, ["mart.x", "scratch.tmp", "stage"]);
}

#[test]
fn a_table_read_before_it_is_written_is_a_source() {
    let l = script_lineage(
        "INSERT INTO hist SELECT * FROM cur; DELETE FROM cur WHERE id IN (SELECT id FROM hist)",
        SqlDialect::Generic,
    );
    // hist is appended to, not replaced: the DELETE reads its older rows.
    assert_eq!(l.sources, ["cur", "hist"]);
    assert_eq!(l.targets, ["cur", "hist"]);
    assert_eq!(l.intermediates, ["hist"]);
}

#[test]
fn statements_are_numbered_and_located() {
    let sql =
        "select 1 from a;\n\n  insert into b select * from a;\nselect (( from x;\nselect 2 from c";
    let l = script_lineage(sql, SqlDialect::Generic);
    let at: Vec<(usize, u64, u64)> = l
        .statements
        .iter()
        .map(|s| (s.index, s.line, s.column))
        .collect();
    assert_eq!(at, [(1, 1, 1), (2, 3, 3), (4, 5, 1)]);
    assert_eq!(l.errors.len(), 1);
    let e = &l.errors[0];
    assert_eq!((e.statement, e.line), (3, 4));
    assert!(e.column > 1, "{e:?}");
    assert!(e.message.contains("Expected"), "{}", e.message);
}

#[test]
fn one_bad_statement_does_not_hide_the_others() {
    let sql = "insert into a select * from x;\nselect (((( from;\ninsert into b select * from y;\nselect 'unterminated from z;\ninsert into c select * from w;";
    let l = script_lineage(sql, SqlDialect::Postgres);
    assert_eq!(l.sources, ["w", "x", "y"]);
    assert_eq!(l.targets, ["a", "b", "c"]);
    let failed: Vec<(usize, u64)> = l.errors.iter().map(|e| (e.statement, e.line)).collect();
    assert_eq!(failed, [(2, 2), (4, 4)]);
}

#[test]
fn oversized_statements_are_reported_not_analysed() {
    let sql = format!("select {} from t", vec!["1"; 600_000].join("+"));
    let l = script_lineage(&sql, SqlDialect::Generic);
    assert!(l.statements.is_empty());
    assert!(l.errors[0].message.contains("too large"), "{:?}", l.errors);
}

#[test]
fn deep_operator_chains_do_not_overflow_the_stack() {
    let sql = format!("select {} from t", vec!["a = 1"; 50_000].join(" or "));
    let l = script_lineage(&sql, SqlDialect::Generic);
    assert_eq!(l.sources, ["t"]);
}

// --- breadth: session context, dead code, appends, moves, IDENTIFIER ---

#[test]
fn use_statements_qualify_the_names_that_follow() {
    let l = script_lineage(
        "USE shop;\nINSERT INTO summary SELECT * FROM orders;\nUSE archive;\nINSERT INTO orders_old SELECT * FROM shop.orders;",
        SqlDialect::MySql,
    );
    assert_eq!(l.sources, ["shop.orders"]);
    assert_eq!(l.targets, ["archive.orders_old", "shop.summary"]);
    let l = script_lineage(
        "USE DATABASE prod;\nUSE WAREHOUSE big;\nUSE SCHEMA mart;\nCREATE TABLE kpis AS SELECT * FROM raw.events e JOIN users u ON e.uid = u.id;",
        SqlDialect::Snowflake,
    );
    assert_eq!(l.sources, ["prod.mart.users", "prod.raw.events"]);
    assert_eq!(l.targets, ["prod.mart.kpis"]);
}

#[test]
fn a_cte_nothing_uses_reads_nothing() {
    let l = script_lineage(
        "WITH a AS (SELECT * FROM raw.a), b AS (SELECT * FROM a), c AS (SELECT * FROM raw.c), d AS (SELECT * FROM c) SELECT * FROM b",
        SqlDialect::Generic,
    );
    assert_eq!(l.sources, ["raw.a"]);
}

#[test]
fn appends_keep_a_table_a_source_and_replacements_do_not() {
    let append = script_lineage(
        "INSERT INTO stage.e SELECT * FROM raw.today;\nINSERT INTO mart.d SELECT * FROM stage.e;",
        SqlDialect::Postgres,
    );
    assert_eq!(append.sources, ["raw.today", "stage.e"]);
    assert_eq!(append.intermediates, ["stage.e"]);
    for replace in [
        "CREATE OR REPLACE TABLE stage.e AS SELECT * FROM raw.today",
        "TRUNCATE TABLE stage.e; INSERT INTO stage.e SELECT * FROM raw.today",
        "DELETE FROM stage.e; INSERT INTO stage.e SELECT * FROM raw.today",
    ] {
        let l = script_lineage(
            &format!("{replace};\nINSERT INTO mart.d SELECT * FROM stage.e;"),
            SqlDialect::Snowflake,
        );
        assert_eq!(l.sources, ["raw.today"], "{replace}");
    }
    // Created only if missing: an older table may be there, rows and all.
    let l = script_lineage(
        "CREATE TABLE IF NOT EXISTS log (d date); INSERT INTO log SELECT d FROM src WHERE d > (SELECT max(d) FROM log)",
        SqlDialect::Postgres,
    );
    assert_eq!(l.sources, ["log", "src"]);
}

#[test]
fn renames_and_swaps_move_rows_between_tables() {
    let l = script_lineage(
        "ALTER TABLE staging.orders_new RENAME TO orders",
        SqlDialect::Postgres,
    );
    assert_eq!(l.sources, ["staging.orders_new"]);
    assert_eq!(l.targets, ["staging.orders"]);
    let l = script_lineage(
        "CREATE TABLE s.t_new AS SELECT * FROM raw.x; ALTER TABLE s.t_new RENAME TO t",
        SqlDialect::Postgres,
    );
    assert_eq!(l.sources, ["raw.x"]);
    assert_eq!(l.targets, ["s.t"]);
    let l = script_lineage(
        "ALTER TABLE mart.o SWAP WITH mart.o_new",
        SqlDialect::Snowflake,
    );
    assert_eq!(l.sources, ["mart.o", "mart.o_new"]);
    assert_eq!(l.targets, ["mart.o", "mart.o_new"]);
}

#[test]
fn identifier_names_a_table_unless_it_holds_a_variable() {
    let l = script_lineage(
        "INSERT INTO IDENTIFIER('mart.daily') SELECT * FROM IDENTIFIER('raw.events') e JOIN IDENTIFIER($t) v ON e.id = v.id",
        SqlDialect::Snowflake,
    );
    assert_eq!(l.sources, ["raw.events"]);
    assert_eq!(l.targets, ["mart.daily"]);
    let l = script_lineage(
        "SELECT * FROM IDENTIFIER('main.sales.orders')",
        SqlDialect::Databricks,
    );
    assert_eq!(l.sources, ["main.sales.orders"]);
}

#[test]
fn t_sql_batches_and_statements_without_semicolons() {
    let l = script_lineage(
        "insert into dbo.a select * from dbo.x insert into dbo.b select * from dbo.y",
        SqlDialect::MsSql,
    );
    assert!(l.errors.is_empty(), "{:?}", l.errors);
    assert_eq!(l.sources, ["dbo.x", "dbo.y"]);
    assert_eq!(l.targets, ["dbo.a", "dbo.b"]);
    let l = script_lineage(
        "INSERT INTO dbo.a SELECT * FROM dbo.x\nGO\nINSERT INTO dbo.b SELECT * FROM dbo.a\ngo\n",
        SqlDialect::MsSql,
    );
    assert!(l.errors.is_empty(), "{:?}", l.errors);
    assert_eq!(l.statements.len(), 2);
    assert_eq!(l.intermediates, ["dbo.a"]);
    // Not alone on its line: an alias like any other.
    let l = script_lineage("SELECT go.x FROM dbo.t go", SqlDialect::MsSql);
    assert_eq!(l.sources, ["dbo.t"]);
}

#[test]
fn procedure_bodies_are_read_whole() {
    for (dialect, sql) in [
        (
            SqlDialect::MsSql,
            "CREATE PROCEDURE dbo.load AS\nBEGIN\n  INSERT INTO dbo.orders SELECT * FROM staging.orders;\n  UPDATE dbo.stats SET n = (SELECT count(*) FROM staging.orders);\nEND",
        ),
        (
            SqlDialect::BigQuery,
            "CREATE PROCEDURE ops.load()\nBEGIN\n  INSERT INTO dbo.orders SELECT * FROM staging.orders;\n  UPDATE dbo.stats SET n = CASE WHEN true THEN 1 END WHERE true;\nEND;\nSELECT * FROM after.proc",
        ),
    ] {
        let l = script_lineage(sql, dialect);
        assert!(l.errors.is_empty(), "{dialect}: {:?}", l.errors);
        assert!(
            l.sources.contains(&"staging.orders".to_string()),
            "{dialect}: {:?}",
            l.sources
        );
        assert_eq!(l.targets, ["dbo.orders", "dbo.stats"], "{dialect}");
    }
    // The statement after the procedure is a statement of its own.
    let l = script_lineage(
        "CREATE PROCEDURE p() BEGIN SELECT 1; END; SELECT * FROM after.proc",
        SqlDialect::BigQuery,
    );
    assert_eq!(l.statements.len(), 2, "{:?}", l.errors);
    assert_eq!(l.sources, ["after.proc"]);
}

#[test]
fn tsql_statements_without_semicolons_start_at_their_verb() {
    let sql = "CREATE TABLE a (x int)\nCREATE TABLE b (y int)\n  INSERT INTO c SELECT * FROM (SELECT x FROM a) s\nUPDATE c SET x = 1";
    let l = script_lineage(sql, "mssql".parse().unwrap());
    assert!(l.errors.is_empty(), "{:?}", l.errors);
    let at: Vec<(u64, u64)> = l.statements.iter().map(|s| (s.line, s.column)).collect();
    assert_eq!(at, [(1, 1), (2, 1), (3, 3), (4, 1)]);
}

// --- writes inside other statements ------------------------------------

#[test]
fn data_modifying_statements_nested_in_others_write_their_tables() {
    // PostgreSQL runs a data-modifying CTE whether or not anything reads it,
    // `EXPLAIN ANALYZE` runs its statement, and `COPY (query)` its query: a
    // backfill's task once ran each of these against production.
    let writes = |sql: &str| last(sql, "postgres").2;
    assert_eq!(
        writes("WITH d AS (DELETE FROM mart.other RETURNING *) INSERT INTO mart.daily SELECT 1"),
        ["mart.daily", "mart.other"]
    );
    assert_eq!(
        writes("WITH u AS (UPDATE mart.other SET x = 1 RETURNING x) SELECT count(*) FROM u"),
        ["mart.other"]
    );
    assert_eq!(
        writes("WITH i AS (INSERT INTO mart.other SELECT * FROM s) SELECT 1"),
        ["mart.other"]
    );
    assert_eq!(
        writes("WITH RECURSIVE d AS (DELETE FROM mart.other) SELECT 1"),
        ["mart.other"]
    );
    assert_eq!(
        writes("EXPLAIN ANALYZE DELETE FROM mart.other"),
        ["mart.other"]
    );
    assert_eq!(
        writes("EXPLAIN (ANALYZE, FORMAT JSON) UPDATE mart.other SET x = 1"),
        ["mart.other"]
    );
    assert_eq!(
        writes("COPY (DELETE FROM mart.other RETURNING *) TO STDOUT"),
        ["mart.other"]
    );
    // A plain query with a CTE still writes nothing, and is still a select.
    assert_eq!(
        kind("postgres", "WITH c AS (SELECT 1) SELECT * FROM c"),
        StatementKind::Select
    );
    assert!(writes("WITH c AS (SELECT * FROM s) SELECT * FROM c").is_empty());
}
