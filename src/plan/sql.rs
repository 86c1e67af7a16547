//! SQL the plan writes: quoted identifiers, shadow relation names, the
//! partition filter of a batch, dialect-correct swaps and rollback.
//!
//! Every identifier is quoted for its dialect, so a table name holding
//! quotes, semicolons or spaces cannot change the statement it is put in.
//! Values (partition bounds) are literals ripple makes itself.

use crate::sql::SqlDialect;
pub use crate::sql::rewrite::{quote_ident, quote_relation, relation_parts};
use crate::time::{Grain, Hour, KeyFormat};

/// The shadow of `relation` from a pattern such as
/// `{schema}.{table}__backfill` (`{database}` too); a relation without a
/// schema takes `default_schema` (an empty one: the shadow is unqualified
/// too). The pattern's parts are filled one by one, so a table whose name
/// holds a dot (`s."a.b"`) keeps it inside one quoted part.
pub fn shadow_relation(pattern: &str, relation: &str, default_schema: &str) -> String {
    let parts = relation_parts(relation);
    let table = parts.last().cloned().unwrap_or_default();
    let schema = parts
        .len()
        .checked_sub(2)
        .map_or(default_schema.to_string(), |i| parts[i].clone());
    let database = parts.len().checked_sub(3).map(|i| parts[i].clone());
    let filled: Vec<String> = pattern
        .split('.')
        .map(|p| {
            fill_placeholders(
                p,
                &[
                    ("table", &table),
                    ("schema", &schema),
                    ("database", database.as_deref().unwrap_or("")),
                ],
            )
        })
        .skip_while(String::is_empty)
        .collect();
    crate::sql::rewrite::print_parts(&filled)
}

/// `text` with each `{name}` of `values` replaced, in one pass: what a
/// value holds (a table named `"{partition_filter}"`) is never filled in turn.
pub fn fill_placeholders(text: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let hit = values
            .iter()
            .find(|(name, _)| after.starts_with(name) && after[name.len()..].starts_with('}'));
        match hit {
            Some((name, value)) => {
                out.push_str(value);
                rest = &after[name.len() + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The default shadow pattern.
pub const DEFAULT_SHADOW: &str = "{schema}.{table}__backfill";

/// `column >= 'a' and column < 'b'` for a batch `[from, to)` of `grain`
/// (dates for day and coarser, timestamps for hours), the bounds written
/// in the column's `format`.
pub fn partition_filter(
    dialect: SqlDialect,
    column: &str,
    grain: Grain,
    (from, to): (Hour, Hour),
    format: KeyFormat,
    zone: Option<&str>,
) -> String {
    let hourly = grain == Grain::Hour;
    let col = quote_ident(dialect, column);
    // A column of instants (`timestamptz`) is compared with instants: the
    // partition's bounds in its zone, with their offsets, whatever zone
    // the session that runs the filter is in.
    let literal = |h: Hour| match zone.filter(|_| format == KeyFormat::Date) {
        Some(z) => crate::time::zoned_literal(h, z).unwrap_or_else(|| format.literal(h, hourly)),
        None => format.literal(h, hourly),
    };
    format!("{col} >= {} and {col} < {}", literal(from), literal(to))
}

/// The partition a row of `column` falls in, at `grain`, as an expression:
/// an encoded key groups as it is (by its own value, at least as fine as
/// the partition).
pub fn partition_key(
    dialect: SqlDialect,
    column: &str,
    grain: Grain,
    format: KeyFormat,
    zone: Option<&str>,
) -> String {
    if format != KeyFormat::Date {
        return quote_ident(dialect, column);
    }
    let c = match zone {
        // The instant's local time in the dataset's zone.
        Some(z) => format!(
            "timezone({}, {})",
            crate::sql::tables::literal(z),
            quote_ident(dialect, column)
        ),
        None => quote_ident(dialect, column),
    };
    let unit = match grain {
        Grain::Day | Grain::None => return format!("cast({c} as date)"),
        Grain::Hour => "hour",
        Grain::Week => "week",
        Grain::Month => "month",
        Grain::Year => "year",
    };
    match dialect {
        SqlDialect::BigQuery => format!("timestamp_trunc(cast({c} as timestamp), {unit})"),
        _ => format!("date_trunc('{unit}', {c})"),
    }
}

/// Whether `dialect`'s engine runs DDL and DML of several tables in one
/// transaction, so that every swap of a plan can commit together.
pub fn transactional_ddl(dialect: SqlDialect) -> bool {
    use SqlDialect::*;
    matches!(dialect, Postgres | DuckDb | Redshift | Generic)
}

/// `begin` as `dialect` writes it.
pub fn begin(dialect: SqlDialect) -> &'static str {
    match dialect {
        SqlDialect::BigQuery => "begin transaction",
        _ => "begin",
    }
}

/// The statements that make `shadow` a copy of `production` (`empty`: with
/// its columns and no rows), replacing any earlier shadow: a zero-copy
/// clone where the engine has one.
pub fn create_copy(
    dialect: SqlDialect,
    shadow: &str,
    production: &str,
    empty: bool,
) -> Vec<String> {
    use SqlDialect::*;
    let s = quote_relation(dialect, shadow);
    let p = quote_relation(dialect, production);
    match (dialect, empty) {
        (Snowflake, false) => vec![format!("create or replace table {s} clone {p}")],
        (BigQuery, false) => vec![format!("create or replace table {s} copy {p}")],
        (Databricks, false) => vec![format!("create or replace table {s} shallow clone {p}")],
        (Snowflake | BigQuery | Databricks, true) => {
            vec![format!("create or replace table {s} like {p}")]
        }
        // PostgreSQL copies constraints, defaults and indexes too, so a job
        // upserting with `on conflict` finds its key on the copy.
        (Postgres, empty) => {
            let mut out = vec![
                format!("drop table if exists {s}"),
                format!("create table {s} (like {p} including all)"),
            ];
            if !empty {
                out.push(format!("insert into {s} select * from {p}"));
            }
            out
        }
        (_, empty) => vec![
            format!("drop table if exists {s}"),
            format!(
                "create table {s} as select * from {p}{}",
                if empty { " where 1 = 0" } else { "" }
            ),
        ],
    }
}

/// PostgreSQL: `copy`'s columns whose default draws a sequence (a copy
/// `like ... including all` keeps `nextval('production_seq')`) get a
/// sequence of their own instead, an identity starting past production's
/// (read, never drawn): the copy's rows are numbered as a production run
/// would number them, and production's sequence does not move. A column
/// that is not an integer, or allows nulls, only loses the default.
pub fn own_sequences(copy: &str) -> String {
    let c = pg_literal(&quote_relation(SqlDialect::Postgres, copy));
    let body = format!(
        r#"declare r record; n bigint; seq text; begin for r in select a.attname, format_type(a.atttypid, a.atttypmod) as ty, a.attnotnull, pg_get_expr(d.adbin, d.adrelid) as def from pg_attribute a join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum where a.attrelid = {c}::regclass and not a.attisdropped and pg_get_expr(d.adbin, d.adrelid) ~* 'nextval' loop execute format('alter table %s alter column %I drop default', {c}, r.attname); if r.attnotnull and r.ty in ('smallint', 'integer', 'bigint') then n := 1; seq := replace(substring(r.def from $re$nextval\('((?:[^']|'')+)'$re$), '''''', ''''); begin execute 'select last_value + 1 from ' || seq into n; exception when others then n := 1; end; execute format('alter table %s alter column %I add generated by default as identity (start with %s)', {c}, r.attname, greatest(n, 1)); end if; end loop; end"#
    );
    let tag = dollar_tag(&body);
    format!("do {tag} {body} {tag}")
}

/// `insert into target (cols) select cols from source [where filter]`.
fn insert_columns(
    dialect: SqlDialect,
    target: &str,
    source: &str,
    columns: &[String],
    filter: Option<&str>,
) -> String {
    let cols = columns
        .iter()
        .map(|c| quote_ident(dialect, c))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "insert into {} ({cols}) select {cols} from {}{}",
        quote_relation(dialect, target),
        quote_relation(dialect, source),
        filter.map(|f| format!(" where {f}")).unwrap_or_default()
    )
}

/// The same with the columns matched by name whatever is known: listed
/// when `columns` are known, else by the engine (DuckDB's `BY NAME`, a
/// PostgreSQL block reading the catalog); `None` where neither is possible.
pub fn insert_by_name(
    dialect: SqlDialect,
    target: &str,
    source: &str,
    columns: Option<&[String]>,
    filter: Option<&str>,
) -> Option<String> {
    if let Some(cols) = columns {
        return Some(insert_columns(dialect, target, source, cols, filter));
    }
    let t = quote_relation(dialect, target);
    let s = quote_relation(dialect, source);
    let filter = filter.map(|f| format!(" where {f}")).unwrap_or_default();
    match dialect {
        SqlDialect::DuckDb => Some(format!("insert into {t} by name select * from {s}{filter}")),
        // Redshift has no anonymous `DO` block (nor `string_agg`): it gets
        // the refusal that asks for the columns, not SQL that cannot run.
        SqlDialect::Postgres => {
            // The source's columns, read from the catalog when the block runs.
            // Names go in as string literals, never dollar-quoted: a name
            // holding `$q$` once closed the quote and ran what followed.
            let parts = relation_parts(source);
            let table = pg_literal(&parts.last().cloned().unwrap_or_default());
            let schema = match parts.len() {
                0 | 1 => "current_schema()".to_string(),
                n => pg_literal(&parts[n - 2]),
            };
            let (t, s, filter) = (pg_literal(&t), pg_literal(&s), pg_literal(&filter));
            let body = format!(
                "declare cols text; begin select string_agg(quote_ident(column_name), ', ' order by ordinal_position) into cols from information_schema.columns where table_schema = {schema} and table_name = {table}; execute 'insert into ' || {t} || ' (' || cols || ') select ' || cols || ' from ' || {s} || {filter}; end"
            );
            let tag = dollar_tag(&body);
            Some(format!("do {tag} {body} {tag}"))
        }
        _ => None,
    }
}

/// The bytes an engine keeps of a name; past them it silently cuts the
/// name, which may then be another table's (PostgreSQL's NAMEDATALEN).
pub fn max_name_bytes(dialect: SqlDialect) -> Option<usize> {
    match dialect {
        SqlDialect::Postgres | SqlDialect::Greenplum | SqlDialect::Materialize => Some(63),
        SqlDialect::Redshift => Some(127),
        SqlDialect::MySql => Some(64),
        _ => None,
    }
}

/// `relation` with `suffix` on its last part, for a table ripple makes
/// (work, scratch, fingerprint tables): within the engine's name length
/// ([`max_name_bytes`]), the base cut and a hash of the
/// whole name added when it would be longer, so that the engine never cuts
/// it to another table's name, nor two tasks' names to one.
pub fn derived_name(dialect: SqlDialect, relation: &str, suffix: &str) -> String {
    let full = crate::sql::rewrite::with_suffix(relation, suffix);
    let Some(limit) = max_name_bytes(dialect) else {
        return full;
    };
    let mut parts = relation_parts(&full);
    let Some(last) = parts.last_mut().filter(|l| l.len() > limit) else {
        return full;
    };
    let hash = format!("_{:016x}", crate::text::fnv64(last, crate::text::FNV_BASIS));
    let mut cut = limit - hash.len();
    while !last.is_char_boundary(cut) {
        cut -= 1;
    }
    *last = format!("{}{hash}", &last[..cut]);
    crate::sql::rewrite::print_parts(&parts)
}

/// `text` as a PostgreSQL string literal, whatever
/// `standard_conforming_strings` says: `E'...'` when it holds a backslash.
pub(crate) fn pg_literal(text: &str) -> String {
    let quoted = text.replace('\'', "''");
    match text.contains('\\') {
        true => format!("E'{}'", quoted.replace('\\', "\\\\")),
        false => format!("'{quoted}'"),
    }
}

/// A dollar-quote tag not found in `body`.
pub(crate) fn dollar_tag(body: &str) -> String {
    (0..)
        .map(|n| match n {
            0 => "$ripple$".to_string(),
            n => format!("$ripple{n}$"),
        })
        .find(|t| !body.contains(t.as_str()))
        .unwrap_or_default()
}

/// Statements that put the validated shadow in place of production.
///
/// In place (the default): production's restated rows (`filter`; all of
/// them for a full rebuild) are deleted and the shadow's inserted, by
/// column name, so views, grants and constraints on production stay; the
/// caller wraps them in a transaction. Renaming (`rename`): the shadow
/// takes production's name. Snowflake, BigQuery, Hive/Spark/Databricks use
/// their own atomic statements for a full replace.
pub fn swap(
    dialect: SqlDialect,
    production: &str,
    shadow: &str,
    filter: Option<&str>,
    columns: Option<&[String]>,
    mode: crate::config::SwapMode,
) -> Vec<String> {
    use SqlDialect::*;
    let p = quote_relation(dialect, production);
    let s = quote_relation(dialect, shadow);
    let rename = mode == crate::config::SwapMode::Rename;
    match (dialect, filter) {
        (Snowflake, None) if rename => vec![format!("alter table {p} swap with {s}")],
        (BigQuery, None) if rename => vec![format!("create or replace table {p} copy {s}")],
        (Hive | Spark | Databricks, None) => {
            vec![format!("insert overwrite table {p} select * from {s}")]
        }
        (Hive | Spark | Databricks, Some(_)) => vec![
            "set spark.sql.sources.partitionOverwriteMode = dynamic".to_string(),
            format!("insert overwrite table {p} select * from {s}"),
        ],
        (_, None) if rename => {
            // Renames in the caller's transaction: readers see the old table
            // or the new one, never neither.
            let last = relation_parts(production)
                .last()
                .cloned()
                .unwrap_or_default();
            let old = format!("{last}__replaced");
            vec![
                format!("alter table {p} rename to {}", quote_ident(dialect, &old)),
                format!("alter table {s} rename to {}", quote_ident(dialect, &last)),
                format!(
                    "drop table {}",
                    quote_relation(dialect, &sibling(production, &old))
                ),
            ]
        }
        (_, filter) => {
            let f = filter.map(|f| format!(" where {f}")).unwrap_or_default();
            // By name wherever the engine can: a shadow rebuilt whole (a dbt
            // `--full-refresh`, a job that recreates its table) has the
            // job's column order, not production's, and a positional
            // insert put values in the wrong columns. Elsewhere the shadow
            // was made from production (`create_copy`), column for column.
            let insert = insert_by_name(dialect, production, shadow, columns, filter)
                .unwrap_or_else(|| format!("insert into {p} select * from {s}{f}"));
            vec![format!("delete from {p}{f}"), insert]
        }
    }
}

/// `relation` with its last part replaced by `name`.
fn sibling(relation: &str, name: &str) -> String {
    let mut parts = relation_parts(relation);
    if let Some(last) = parts.last_mut() {
        *last = name.to_string();
    }
    crate::sql::rewrite::print_parts(&parts)
}

/// Drops `shadow`, if it exists. Production is never touched.
pub fn drop_shadow(dialect: SqlDialect, shadow: &str) -> String {
    format!("drop table if exists {}", quote_relation(dialect, shadow))
}

/// Drops the shadow view `shadow`, if it exists.
pub fn drop_view(dialect: SqlDialect, shadow: &str) -> String {
    format!("drop view if exists {}", quote_relation(dialect, shadow))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::TimeKey;

    #[test]
    fn derived_names_fit_the_engine_and_stay_apart() {
        let shadow = format!("mart.{}__backfill", "é".repeat(25));
        let a = derived_name(SqlDialect::Postgres, &shadow, "__work_20260110");
        let b = derived_name(SqlDialect::Postgres, &shadow, "__work_20260111");
        for n in [&a, &b] {
            let last = relation_parts(n).pop().unwrap();
            assert!(last.len() <= 63, "{n}");
            assert!(last.starts_with("éé"), "{n}");
        }
        assert_ne!(a, b);
        // Short enough, or an engine without the bound: as written.
        assert_eq!(
            derived_name(SqlDialect::Postgres, "m.t__backfill", "__work_1"),
            "m.t__backfill__work_1"
        );
        assert_eq!(
            derived_name(SqlDialect::DuckDb, &shadow, "__work_20260110"),
            crate::sql::rewrite::with_suffix(&shadow, "__work_20260110")
        );
    }

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
        // A name holding a placeholder's text is not filled in turn.
        assert_eq!(
            shadow_relation(DEFAULT_SHADOW, "mart.\"{schema}\"", ""),
            "mart.{schema}__backfill"
        );
        // A dot inside a quoted name stays inside one part.
        assert_eq!(
            shadow_relation(DEFAULT_SHADOW, "s.\"a.b\"", ""),
            "s.\"a.b__backfill\""
        );
        assert_eq!(
            relation_parts(&shadow_relation(DEFAULT_SHADOW, "s.\"a.b\"", "")),
            ["s", "a.b__backfill"]
        );
        assert_eq!(shadow_relation(DEFAULT_SHADOW, "t", ""), "t__backfill");
    }

    #[test]
    fn swaps_are_dialect_correct() {
        use crate::config::SwapMode::{InPlace, Rename};
        let swap = |d, p, s, f, mode| super::swap(d, p, s, f, None, mode);
        assert_eq!(
            swap(SqlDialect::Snowflake, "m.t", "m.t__backfill", None, Rename),
            ["alter table \"M\".\"T\" swap with \"M\".\"T__BACKFILL\""]
        );
        assert_eq!(
            swap(SqlDialect::BigQuery, "p.d.t", "p.d.t_bf", None, Rename),
            ["create or replace table `p`.`d`.`t` copy `p`.`d`.`t_bf`"]
        );
        let pg = swap(SqlDialect::Postgres, "m.t", "m.t__backfill", None, Rename);
        assert_eq!(pg[1], "alter table \"m\".\"t__backfill\" rename to \"t\"");
        // In place by default: dependents of production survive.
        let pg = swap(SqlDialect::Postgres, "m.t", "m.t__backfill", None, InPlace);
        assert_eq!(pg[0], "delete from \"m\".\"t\"");
        // By name, the columns read from the shadow's catalog when it runs:
        // a shadow rebuilt whole has its job's column order.
        assert!(
            pg[1].starts_with("do $ripple$") && pg[1].contains("order by ordinal_position"),
            "{}",
            pg[1]
        );
        let duck = swap(SqlDialect::DuckDb, "m.t", "m.t__backfill", None, InPlace);
        assert_eq!(
            duck[1],
            "insert into \"m\".\"t\" by name select * from \"m\".\"t__backfill\""
        );
        let other = swap(SqlDialect::Generic, "m.t", "m.t__backfill", None, InPlace);
        assert_eq!(
            other[1],
            "insert into \"m\".\"t\" select * from \"m\".\"t__backfill\""
        );
        assert!(
            insert_by_name(SqlDialect::Postgres, "m.t", "m.w", None, None)
                .unwrap()
                .starts_with("do $ripple$")
        );
        let f = partition_filter(
            SqlDialect::Postgres,
            "order_date",
            Grain::Day,
            (
                TimeKey::parse("2026-01-10").unwrap().start,
                TimeKey::parse("2026-01-17").unwrap().start,
            ),
            KeyFormat::Date,
            None,
        );
        assert_eq!(
            f,
            "\"order_date\" >= '2026-01-10' and \"order_date\" < '2026-01-17'"
        );
        let cols = ["id".to_string(), "order_date".to_string()];
        let partial = super::swap(
            SqlDialect::Postgres,
            "m.t",
            "m.t__backfill",
            Some(&f),
            Some(&cols),
            InPlace,
        );
        assert_eq!(partial[0], format!("delete from \"m\".\"t\" where {f}"));
        assert_eq!(
            partial[1],
            format!(
                "insert into \"m\".\"t\" (\"id\", \"order_date\") select \"id\", \"order_date\" from \"m\".\"t__backfill\" where {f}"
            )
        );
        assert!(
            insert_by_name(SqlDialect::DuckDb, "m.t", "m.w", None, Some(&f))
                .unwrap()
                .contains(" by name select * from ")
        );
        assert_eq!(
            insert_by_name(SqlDialect::MySql, "m.t", "m.w", None, None),
            None
        );
        assert_eq!(
            insert_by_name(SqlDialect::Redshift, "m.t", "m.w", None, None),
            None
        );
        let spark = swap(SqlDialect::Spark, "m.t", "m.t_bf", Some(&f), InPlace);
        assert!(spark[0].contains("partitionOverwriteMode = dynamic"));
        assert_eq!(
            drop_shadow(SqlDialect::Postgres, "m.t__backfill"),
            "drop table if exists \"m\".\"t__backfill\""
        );
    }
}
