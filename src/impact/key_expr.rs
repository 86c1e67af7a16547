//! Whether an expression keeps a partition key, and in which format.
//!
//! An output column carries its upstream's partition column only when its
//! expression is known to keep the key: the column itself, a cast to a date
//! or a timestamp, `date_trunc`, a change of zone, or a re-encoding whose
//! format ripple can write filters in (`to_char(d, 'YYYYMMDD')::int`,
//! `strftime(d, '%Y-%m')`, `extract(epoch from ts)`). Anything else — a
//! shift (`d + 1`), a part (`extract(month ...)`), text built around it —
//! does not carry it: a plan would select the wrong rows by it.

use sqlparser::ast::{
    BinaryOperator, CastKind, DataType, DateTimeField, Expr, FunctionArguments, Value,
};
use sqlparser::parser::Parser;

use crate::sql::SqlDialect;
use crate::time::KeyFormat;

/// What an expression does to a key it keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// The format of its values.
    pub format: KeyFormat,
    /// Whether it makes a time of its input (a cast to a date, a
    /// truncation, a formatting of a date): evidence that an unknown
    /// source column is a time.
    pub timeish: bool,
}

/// The name a column reference takes in the parsed fingerprint.
const KEY: &str = "ripple_key_column";

/// Whether `fingerprint` (an [`crate::sql::OutputColumn`] fingerprint over
/// the single upstream column `source`, written `relation.column`) keeps a
/// key held in `input` format, and in which format it puts it.
pub fn kept(
    fingerprint: &str,
    source: &str,
    input: KeyFormat,
    dialect: SqlDialect,
) -> Option<Kept> {
    // A union's branches are printed side by side: each must keep it alike.
    let mut found: Option<Kept> = None;
    for branch in split_branches(fingerprint) {
        let text = unfold(branch, source)?;
        let d = dialect.parser_dialect();
        let expr = Parser::new(d.as_ref())
            .try_with_sql(&text)
            .ok()?
            .parse_expr()
            .ok()?;
        let k = walk(&expr, input)?;
        match &found {
            Some(f) if *f != k => return None,
            _ => found = Some(k),
        }
    }
    found
}

/// The top-level ` | `-separated branches of a fingerprint.
fn split_branches(print: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    let bytes: Vec<(usize, char)> = print.char_indices().collect();
    for (i, &(at, c)) in bytes.iter().enumerate() {
        match c {
            '⟦' => depth += 1,
            '⟧' => depth -= 1,
            '|' if depth == 0
                && at > 0
                && print[..at].ends_with(' ')
                && bytes.get(i + 1).is_some_and(|&(_, n)| n == ' ') =>
            {
                out.push(print[start..at].trim());
                start = at + 1;
            }
            _ => {}
        }
    }
    out.push(print[start..].trim());
    out
}

/// The fingerprint as SQL: the source column as one identifier, each
/// column of a CTE or subquery as its expression in parentheses.
fn unfold(print: &str, source: &str) -> Option<String> {
    let mut text = print.to_string();
    // Innermost brackets first: they hold no other.
    while let Some(close) = text.find('⟧') {
        let open = text[..close].rfind('⟦')?;
        let inner = &text[open + '⟦'.len_utf8()..close];
        let with = if inner.eq_ignore_ascii_case(source) {
            KEY.to_string()
        } else if inner.contains('|') {
            // One name standing for several columns (`using (d)`): keeps
            // the key only if each does, which one name cannot say.
            return None;
        } else {
            format!("({inner})")
        };
        text.replace_range(open..close + '⟧'.len_utf8(), &with);
    }
    (!text.contains('⟦')).then_some(text)
}

fn walk(e: &Expr, input: KeyFormat) -> Option<Kept> {
    let same = |format| Kept {
        format,
        timeish: false,
    };
    let time = |format| Kept {
        format,
        timeish: true,
    };
    match e {
        Expr::Identifier(i) if i.value.eq_ignore_ascii_case(KEY) => Some(same(input)),
        Expr::Nested(inner) => walk(inner, input),
        Expr::Cast {
            kind: CastKind::Cast | CastKind::TryCast | CastKind::SafeCast | CastKind::DoubleColon,
            expr,
            data_type,
            ..
        } => {
            let inner = walk(expr, input)?;
            let format = match (type_class(data_type)?, inner.format) {
                (TypeClass::Time, KeyFormat::Date | KeyFormat::TextYyyyMmDd) => KeyFormat::Date,
                (
                    TypeClass::Integer,
                    f @ (KeyFormat::IntYyyymmdd | KeyFormat::EpochSeconds | KeyFormat::EpochMillis),
                ) => f,
                (TypeClass::Integer, KeyFormat::TextYyyymmdd) => KeyFormat::IntYyyymmdd,
                (TypeClass::Text, KeyFormat::Date) => KeyFormat::TextYyyyMmDd,
                (TypeClass::Text, KeyFormat::IntYyyymmdd) => KeyFormat::TextYyyymmdd,
                (
                    TypeClass::Text,
                    f @ (KeyFormat::TextYyyymmdd | KeyFormat::TextYyyyMm | KeyFormat::TextYyyyMmDd),
                ) => f,
                _ => return None,
            };
            let timeish = inner.timeish || type_class(data_type) == Some(TypeClass::Time);
            Some(Kept { format, timeish })
        }
        Expr::AtTimeZone { timestamp, .. } => {
            let inner = walk(timestamp, input)?;
            (inner.format == KeyFormat::Date).then_some(time(KeyFormat::Date))
        }
        Expr::Extract {
            field: DateTimeField::Epoch,
            expr,
            ..
        } => {
            let inner = walk(expr, input)?;
            (inner.format == KeyFormat::Date).then_some(time(KeyFormat::EpochSeconds))
        }
        Expr::BinaryOp {
            left,
            op: BinaryOperator::Multiply,
            right,
        } => {
            // `extract(epoch from ts) * 1000`: milliseconds.
            let (k, n) = match (walk(left, input), walk(right, input)) {
                (Some(k), None) => (k, right),
                (None, Some(k)) => (k, left),
                _ => return None,
            };
            (k.format == KeyFormat::EpochSeconds && number(n) == Some(1000))
                .then_some(time(KeyFormat::EpochMillis))
        }
        Expr::Function(f) => {
            let name = f
                .name
                .0
                .last()?
                .to_string()
                .trim_matches(['"', '`'])
                .to_ascii_lowercase();
            let args = args(&f.args)?;
            // The one argument that is the key; the others are literals.
            let mut keyed = None;
            let mut literals = Vec::new();
            for a in &args {
                match walk(a, input) {
                    Some(k) if keyed.is_none() => keyed = Some(k),
                    Some(_) => return None,
                    None => literals.push(string(a)?),
                }
            }
            let k = keyed?;
            let pattern = literals.last().map(String::as_str);
            match name.as_str() {
                "date_trunc" | "timestamp_trunc" | "datetime_trunc" | "trunc" | "date"
                | "datetime" | "timestamp"
                    if k.format == KeyFormat::Date =>
                {
                    Some(time(KeyFormat::Date))
                }
                "to_date" | "to_timestamp" | "strptime" | "parse_date" | "parse_timestamp"
                    if literals.len() <= 1 =>
                {
                    // Back from text to a date: the pattern must be the
                    // text's own (or none, for a date's own text).
                    let parsed_from = match pattern {
                        None if k.format == KeyFormat::Date => return Some(time(KeyFormat::Date)),
                        None => Some(KeyFormat::TextYyyyMmDd),
                        Some(p) => text_format(p),
                    };
                    let from_text = matches!(
                        (k.format, parsed_from),
                        (KeyFormat::TextYyyyMmDd, Some(KeyFormat::TextYyyyMmDd))
                            | (KeyFormat::TextYyyymmdd, Some(KeyFormat::TextYyyymmdd))
                            | (KeyFormat::IntYyyymmdd, Some(KeyFormat::TextYyyymmdd))
                    );
                    let from_epoch = pattern.is_none()
                        && name == "to_timestamp"
                        && k.format == KeyFormat::EpochSeconds;
                    (from_text || from_epoch).then_some(time(KeyFormat::Date))
                }
                "to_char" | "strftime" | "format_date" | "format_timestamp" | "format_datetime"
                | "date_format" | "varchar_format"
                    if k.format == KeyFormat::Date =>
                {
                    text_format(pattern?).map(time)
                }
                "epoch" | "unix_timestamp" | "unix_seconds" | "unix_date"
                    if k.format == KeyFormat::Date
                        && literals.is_empty()
                        && name != "unix_date" =>
                {
                    Some(time(KeyFormat::EpochSeconds))
                }
                "epoch_ms" | "unix_millis" if literals.is_empty() => match k.format {
                    KeyFormat::Date => Some(time(KeyFormat::EpochMillis)),
                    KeyFormat::EpochMillis if name == "epoch_ms" => Some(time(KeyFormat::Date)),
                    _ => None,
                },
                "date_part" | "datepart"
                    if k.format == KeyFormat::Date
                        && pattern.is_some_and(|p| p.eq_ignore_ascii_case("epoch")) =>
                {
                    Some(time(KeyFormat::EpochSeconds))
                }
                "floor" | "trunc" | "round" if literals.is_empty() => match k.format {
                    f @ (KeyFormat::EpochSeconds | KeyFormat::EpochMillis) => Some(time(f)),
                    _ => None,
                },
                "timezone" | "convert_timezone" | "from_utc_timestamp" | "to_utc_timestamp"
                    if k.format == KeyFormat::Date =>
                {
                    Some(time(KeyFormat::Date))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TypeClass {
    Time,
    Integer,
    Text,
}

fn type_class(t: &DataType) -> Option<TypeClass> {
    let name = t.to_string().to_ascii_lowercase();
    let base = name.split(['(', ' ']).next().unwrap_or_default();
    match base {
        "date" | "timestamp" | "timestamptz" | "datetime" | "timestamp_ntz" | "timestamp_ltz"
        | "timestamp_tz" => Some(TypeClass::Time),
        "int" | "integer" | "bigint" | "int4" | "int8" | "int64" | "long" | "hugeint"
        | "number" | "numeric" | "decimal" => Some(TypeClass::Integer),
        "text" | "varchar" | "string" | "char" | "character" | "nvarchar" => Some(TypeClass::Text),
        _ => None,
    }
}

/// The key format a date pattern writes: `'YYYYMMDD'` (PostgreSQL,
/// Oracle, Snowflake), `'%Y%m%d'` (strftime), `'yyyyMMdd'` (Spark).
pub(super) fn text_format(pattern: &str) -> Option<KeyFormat> {
    let p = pattern.to_ascii_lowercase().replace('%', "");
    match p.as_str() {
        "yyyymmdd" | "ymd" => Some(KeyFormat::TextYyyymmdd),
        "yyyy-mm-dd" | "y-m-d" | "f" => Some(KeyFormat::TextYyyyMmDd),
        "yyyy-mm" | "y-m" => Some(KeyFormat::TextYyyyMm),
        _ => None,
    }
}

fn args(a: &FunctionArguments) -> Option<Vec<&Expr>> {
    use sqlparser::ast::{FunctionArg, FunctionArgExpr};
    match a {
        FunctionArguments::None => Some(Vec::new()),
        FunctionArguments::List(list) if list.clauses.is_empty() => list
            .args
            .iter()
            .map(|a| match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// A literal argument (a pattern, a unit, a zone) as text; `None` for
/// anything that is not a literal (another column, an expression).
fn string(e: &Expr) -> Option<String> {
    match e {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => Some(s.clone()),
            Value::Number(n, _) => Some(n.clone()),
            _ => None,
        },
        // BigQuery's `date_trunc(d, month)`: the unit as a bare word.
        Expr::Identifier(i) if i.quote_style.is_none() => Some(i.value.clone()),
        Expr::Nested(inner) => string(inner),
        _ => None,
    }
}

fn number(e: &Expr) -> Option<i64> {
    match e {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => n.parse().ok(),
            _ => None,
        },
        Expr::Nested(inner) => number(inner),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn format_of(expr: &str) -> Option<KeyFormat> {
        kept(expr, "up.d", KeyFormat::Date, SqlDialect::DuckDb).map(|k| k.format)
    }

    #[test]
    fn a_key_is_kept_through_casts_truncations_and_zones() {
        assert_eq!(format_of("⟦up.d⟧"), Some(KeyFormat::Date));
        assert_eq!(format_of("CAST(⟦up.d⟧ AS DATE)"), Some(KeyFormat::Date));
        assert_eq!(format_of("⟦up.d⟧::DATE"), Some(KeyFormat::Date));
        assert_eq!(
            format_of("date_trunc('week', ⟦up.d⟧)"),
            Some(KeyFormat::Date)
        );
        assert_eq!(
            format_of("CAST(⟦up.d⟧ AT TIME ZONE 'America/New_York' AS DATE)"),
            Some(KeyFormat::Date)
        );
        assert_eq!(
            format_of("CAST(⟦date_trunc('day', ⟦up.d⟧)⟧ AS DATE)"),
            Some(KeyFormat::Date)
        );
    }

    #[test]
    fn encodings_are_read_off_the_sql_that_makes_them() {
        let cases = [
            (
                "CAST(strftime(⟦up.d⟧, '%Y%m%d') AS INTEGER)",
                KeyFormat::IntYyyymmdd,
            ),
            ("to_char(⟦up.d⟧, 'YYYYMMDD')::INT", KeyFormat::IntYyyymmdd),
            ("to_char(⟦up.d⟧, 'YYYYMMDD')", KeyFormat::TextYyyymmdd),
            ("strftime(⟦up.d⟧, '%Y-%m')", KeyFormat::TextYyyyMm),
            ("to_char(⟦up.d⟧, 'YYYY-MM-DD')", KeyFormat::TextYyyyMmDd),
            ("CAST(⟦up.d⟧ AS VARCHAR)", KeyFormat::TextYyyyMmDd),
            ("format_date('%Y%m%d', ⟦up.d⟧)", KeyFormat::TextYyyymmdd),
            ("EXTRACT(EPOCH FROM ⟦up.d⟧)", KeyFormat::EpochSeconds),
            (
                "CAST(EXTRACT(EPOCH FROM ⟦up.d⟧) AS BIGINT)",
                KeyFormat::EpochSeconds,
            ),
            ("epoch(⟦up.d⟧) * 1000", KeyFormat::EpochMillis),
            ("epoch_ms(⟦up.d⟧)", KeyFormat::EpochMillis),
            ("date_part('epoch', ⟦up.d⟧)", KeyFormat::EpochSeconds),
        ];
        for (sql, want) in cases {
            assert_eq!(format_of(sql), Some(want), "{sql}");
        }
    }

    #[test]
    fn an_encoded_key_is_decoded_back_only_by_its_own_pattern() {
        let int = |e: &str| {
            kept(e, "up.dk", KeyFormat::IntYyyymmdd, SqlDialect::DuckDb).map(|k| k.format)
        };
        assert_eq!(int("⟦up.dk⟧"), Some(KeyFormat::IntYyyymmdd));
        assert_eq!(
            int("strptime(CAST(⟦up.dk⟧ AS VARCHAR), '%Y%m%d')"),
            Some(KeyFormat::Date)
        );
        assert_eq!(int("strptime(CAST(⟦up.dk⟧ AS VARCHAR), '%Y-%m-%d')"), None);
        assert_eq!(int("⟦up.dk⟧ + 1"), None);
    }

    #[test]
    fn shifts_parts_and_text_around_a_key_do_not_keep_it() {
        for sql in [
            "⟦up.d⟧ + 1",
            "⟦up.d⟧ - INTERVAL '1 day'",
            "EXTRACT(MONTH FROM ⟦up.d⟧)",
            "year(⟦up.d⟧)",
            "'day ' || ⟦up.d⟧",
            "coalesce(⟦up.d⟧, DATE '2026-01-01')",
            "to_char(⟦up.d⟧, 'Mon YYYY')",
            "CAST(⟦up.d⟧ AS INTEGER)",
            "min(⟦up.d⟧)",
            "⟦up.other⟧",
        ] {
            assert_eq!(format_of(sql), None, "{sql}");
        }
    }

    #[test]
    fn a_union_keeps_a_key_only_if_each_branch_does() {
        assert_eq!(format_of("⟦up.d⟧ | ⟦up.d⟧"), Some(KeyFormat::Date));
        assert_eq!(format_of("⟦up.d⟧ | ⟦up.d⟧ + 1"), None);
    }
}
