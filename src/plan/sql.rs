//! SQL the plan writes: quoted identifiers, shadow relation names, the
//! partition filter of a batch, dialect-correct swaps and rollback.
//!
//! Every identifier is quoted for its dialect, so a table name holding
//! quotes, semicolons or spaces cannot change the statement it is put in.
//! Values (partition bounds) are literals ripple makes itself.

use crate::sql::SqlDialect;
pub use crate::sql::rewrite::{quote_ident, quote_relation, relation_parts};
use crate::time::{Grain, Hour, datetime_of};

/// The shadow of `relation` from a pattern such as
/// `{schema}.{table}__backfill` (`{database}` too); a relation without a
/// schema takes `default_schema`.
pub fn shadow_relation(pattern: &str, relation: &str, default_schema: &str) -> String {
    let parts = relation_parts(relation);
    let table = parts.last().cloned().unwrap_or_default();
    let schema = parts
        .len()
        .checked_sub(2)
        .map_or(default_schema.to_string(), |i| parts[i].clone());
    let database = parts.len().checked_sub(3).map(|i| parts[i].clone());
    let filled = pattern
        .replace("{table}", &table)
        .replace("{schema}", &schema)
        .replace("{database}", database.as_deref().unwrap_or(""));
    filled.trim_start_matches('.').to_string()
}

/// The default shadow pattern.
pub const DEFAULT_SHADOW: &str = "{schema}.{table}__backfill";

/// `column >= 'a' and column < 'b'` for a batch `[from, to)` of `grain`
/// (dates for day and coarser, timestamps for hours).
pub fn partition_filter(
    dialect: SqlDialect,
    column: &str,
    grain: Grain,
    from: Hour,
    to: Hour,
) -> String {
    let literal = |h: Hour| {
        let (date, hour) = datetime_of(h);
        if grain == Grain::Hour {
            format!("'{date} {hour:02}:00:00'")
        } else {
            format!("'{date}'")
        }
    };
    let col = quote_ident(dialect, column);
    format!("{col} >= {} and {col} < {}", literal(from), literal(to))
}

/// Statements that put the validated shadow in place of production.
/// A full rebuild replaces the table; a partial restatement replaces the
/// restated partitions (`filter`) in one transaction where the engine has
/// transactions, by partition overwrite on Hive and Spark.
pub fn swap(
    dialect: SqlDialect,
    production: &str,
    shadow: &str,
    filter: Option<&str>,
) -> Vec<String> {
    use SqlDialect::*;
    let p = quote_relation(dialect, production);
    let s = quote_relation(dialect, shadow);
    match (dialect, filter) {
        (Snowflake, None) => vec![format!("alter table {p} swap with {s}")],
        (BigQuery, None) => vec![format!("create or replace table {p} copy {s}")],
        (Hive | Spark | Databricks, None) => {
            vec![format!("insert overwrite table {p} select * from {s}")]
        }
        (Hive | Spark | Databricks, Some(_)) => vec![
            "set spark.sql.sources.partitionOverwriteMode = dynamic".to_string(),
            format!("insert overwrite table {p} select * from {s}"),
        ],
        (_, None) => {
            // Rename in a transaction (PostgreSQL, Redshift, DuckDB, ...):
            // readers see the old table or the new one, never neither.
            let old = relation_parts(production)
                .last()
                .cloned()
                .unwrap_or_default()
                + "__replaced";
            let new_name = quote_ident(
                dialect,
                relation_parts(production).last().map_or("", |s| s.as_str()),
            );
            vec![
                "begin".to_string(),
                format!("alter table {p} rename to {}", quote_ident(dialect, &old)),
                format!("alter table {s} rename to {new_name}"),
                format!(
                    "drop table {}",
                    quote_relation(dialect, &sibling(production, &old))
                ),
                "commit".to_string(),
            ]
        }
        (_, Some(f)) => vec![
            begin(dialect).to_string(),
            format!("delete from {p} where {f}"),
            format!("insert into {p} select * from {s} where {f}"),
            "commit".to_string(),
        ],
    }
}

fn begin(dialect: SqlDialect) -> &'static str {
    match dialect {
        SqlDialect::BigQuery => "begin transaction",
        _ => "begin",
    }
}

/// `relation` with its last part replaced by `name`.
fn sibling(relation: &str, name: &str) -> String {
    let mut parts = relation_parts(relation);
    if let Some(last) = parts.last_mut() {
        *last = name.to_string();
    }
    parts
        .iter()
        .map(|p| {
            if p.contains(['.', '"']) {
                format!("\"{}\"", p.replace('"', "\"\""))
            } else {
                p.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// Rollback: drop the shadow. Production is never touched.
pub fn rollback(dialect: SqlDialect, shadow: &str) -> String {
    format!("drop table if exists {}", quote_relation(dialect, shadow))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::TimeKey;

    #[test]
    fn shadows_follow_the_pattern() {
        assert_eq!(
            shadow_relation(DEFAULT_SHADOW, "marts.orders_7d", "analytics"),
            "marts.orders_7d__backfill"
        );
        assert_eq!(
            shadow_relation(DEFAULT_SHADOW, "orders", "analytics"),
            "analytics.orders__backfill"
        );
        assert_eq!(
            shadow_relation("{database}.backfill.{table}", "prod.marts.t", "a"),
            "prod.backfill.t"
        );
        assert_eq!(
            shadow_relation("{database}.{schema}.{table}_bf", "marts.t", "a"),
            "marts.t_bf"
        );
    }

    #[test]
    fn swaps_are_dialect_correct() {
        assert_eq!(
            swap(SqlDialect::Snowflake, "m.t", "m.t__backfill", None),
            ["alter table \"m\".\"t\" swap with \"m\".\"t__backfill\""]
        );
        assert_eq!(
            swap(SqlDialect::BigQuery, "p.d.t", "p.d.t_bf", None),
            ["create or replace table `p`.`d`.`t` copy `p`.`d`.`t_bf`"]
        );
        let pg = swap(SqlDialect::Postgres, "m.t", "m.t__backfill", None);
        assert_eq!(pg.first().map(String::as_str), Some("begin"));
        assert_eq!(pg[2], "alter table \"m\".\"t__backfill\" rename to \"t\"");
        assert_eq!(pg.last().map(String::as_str), Some("commit"));
        let f = partition_filter(
            SqlDialect::Postgres,
            "order_date",
            Grain::Day,
            TimeKey::parse("2026-01-10").unwrap().start,
            TimeKey::parse("2026-01-17").unwrap().start,
        );
        assert_eq!(
            f,
            "\"order_date\" >= '2026-01-10' and \"order_date\" < '2026-01-17'"
        );
        let partial = swap(SqlDialect::Postgres, "m.t", "m.t__backfill", Some(&f));
        assert_eq!(partial[1], format!("delete from \"m\".\"t\" where {f}"));
        let spark = swap(SqlDialect::Spark, "m.t", "m.t_bf", Some(&f));
        assert!(spark[0].contains("partitionOverwriteMode = dynamic"));
        assert_eq!(
            rollback(SqlDialect::Postgres, "m.t__backfill"),
            "drop table if exists \"m\".\"t__backfill\""
        );
    }
}
