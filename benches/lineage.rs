//! Statement lineage against a bare sqlparser parse of the same 1 MB script.
//!
//! `cargo bench --bench lineage` prints the time and throughput (bytes/s)
//! of both; the overhead of lineage is the ratio of the two medians.

use divan::counter::BytesCount;
use ripple::sql::{SqlDialect, script_lineage};
use sqlparser::parser::Parser;

#[path = "support/script.rs"]
mod support;

const SCRIPT_BYTES: usize = 1 << 20;

fn main() {
    divan::main();
}

#[divan::bench(sample_count = 30)]
fn bare_sqlparser_parse(bencher: divan::Bencher) {
    let sql = support::script(SCRIPT_BYTES);
    let dialect = SqlDialect::Generic.parser_dialect();
    bencher
        .counter(BytesCount::of_str(&sql))
        .bench(|| Parser::parse_sql(dialect.as_ref(), divan::black_box(&sql)).map(|s| s.len()));
}

#[divan::bench(sample_count = 30)]
fn ripple_script_lineage(bencher: divan::Bencher) {
    let sql = support::script(SCRIPT_BYTES);
    bencher
        .counter(BytesCount::of_str(&sql))
        .bench(|| script_lineage(divan::black_box(&sql), SqlDialect::Generic));
}

/// The fairest baseline for the walk's own cost: the same statements parsed
/// one by one, as ripple parses them, with no lineage taken.
#[divan::bench(sample_count = 30)]
fn bare_sqlparser_parse_per_statement(bencher: divan::Bencher) {
    let sql = support::script(SCRIPT_BYTES);
    let statements: Vec<&str> = sql.split_inclusive(";\n").collect();
    let dialect = SqlDialect::Generic.parser_dialect();
    bencher.counter(BytesCount::of_str(&sql)).bench(|| {
        statements
            .iter()
            .map(|s| {
                Parser::parse_sql(dialect.as_ref(), divan::black_box(s)).map_or(0, |s| s.len())
            })
            .sum::<usize>()
    });
}

/// Column lineage of one statement joining 4,000 tables (`on` conditions)
/// and of one joining 20,000 with `using`: join scopes grow as tables join,
/// rather than being rebuilt per join (2,000 `using` joins took 66 s), and
/// each source is looked at once per `using` column (20,000: 8.6 s).
#[divan::bench(args = ["on", "using"], sample_count = 5)]
fn column_lineage_of_thousands_of_joins(bencher: divan::Bencher, kind: &str) {
    let sql = match kind {
        "on" => format!(
            "select t0.a from t0 {};",
            (1..4_000)
                .map(|i| format!("join t{i} on t{i}.a = t{}.a", i - 1))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        _ => format!(
            "select * from t0 {};",
            (1..20_000)
                .map(|i| format!("join t{i} using (a)"))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    };
    bencher.bench(|| {
        ripple::sql::script_lineage_with_columns(
            divan::black_box(&sql),
            SqlDialect::Generic,
            &Default::default(),
        )
    });
}

/// A chain of CTEs, each reading the one before: looked up by name in a
/// map, so the time grows with the chain (50,000 took 11 s when each name
/// was searched in a list; 0.9 s for the whole `lineage` command after).
#[divan::bench(sample_count = 5)]
fn table_lineage_of_a_chain_of_20_000_ctes(bencher: divan::Bencher) {
    let sql = format!(
        "insert into o.t with c0 as (select * from s.t), {} select * from c19999;",
        (1..20_000)
            .map(|i| format!("c{i} as (select * from c{})", i - 1))
            .collect::<Vec<_>>()
            .join(", ")
    );
    bencher.bench(|| ripple::sql::script_lineage(divan::black_box(&sql), SqlDialect::Postgres));
}
