//! Turning a parsed table name into the relation name ripple prints and
//! compares: qualified as written, case-folded the way the engine folds it.

use sqlparser::ast::{
    Expr, FunctionArg, FunctionArgExpr, Ident, ObjectName, ObjectNamePart, Value,
};
use sqlparser::parser::Parser;

use super::dialect::{IdentifierCase, SqlDialect};

/// The relation name of `name`, or `None` when it is not a table (a
/// variable, a name built by a function). Files, stages and paths are
/// datasets too: their name is the location itself ([`path_name`]).
pub(crate) fn relation_name(name: &ObjectName, dialect: SqlDialect) -> Option<String> {
    if let [ObjectNamePart::Function(f)] = name.0.as_slice() {
        return identifier_call(&f.name, &f.args, dialect);
    }
    if let Some(path) = path_name(name, dialect) {
        return Some(path);
    }
    let mut out = String::new();
    for part in &name.0 {
        let ObjectNamePart::Identifier(ident) = part else {
            return None;
        };
        push_ident(&mut out, ident, dialect);
    }
    checked(out)
}

/// Formats Spark and Databricks read a path with (`parquet.`s3://x/``).
const FILE_FORMATS: &[&str] = &[
    "parquet",
    "csv",
    "json",
    "orc",
    "avro",
    "text",
    "delta",
    "binaryfile",
    "iceberg",
];

/// The location a name denotes when it is a file, stage or path rather than
/// a table: a single-quoted name (`FROM 's3://lake/x/'`, DuckDB's
/// `FROM 'data/*.csv'`), Spark's `parquet.`/mnt/x``, or a Snowflake stage
/// (`@raw.stage/dir/`, `@~/x`, `@%t`), whose stage name folds like any
/// unquoted name while the path after it keeps its case.
pub(crate) fn path_name(name: &ObjectName, dialect: SqlDialect) -> Option<String> {
    // Called for every table name: borrow, allocate only for a path.
    fn ident(p: &ObjectNamePart) -> Option<&Ident> {
        match p {
            ObjectNamePart::Identifier(i) => Some(i),
            ObjectNamePart::Function(_) => None,
        }
    }
    match name.0.as_slice() {
        [one] => {
            let one = ident(one)?;
            if one.quote_style == Some('\'') && !one.value.is_empty() {
                return Some(located(&one.value));
            }
        }
        [format, path]
            if matches!(
                dialect,
                SqlDialect::Spark | SqlDialect::Databricks | SqlDialect::Hive | SqlDialect::Generic
            ) =>
        {
            let (format, path) = (ident(format)?, ident(path)?);
            if format.quote_style.is_none()
                && path.quote_style == Some('`')
                && path.value.contains(['/', '.'])
                && FILE_FORMATS
                    .iter()
                    .any(|f| format.value.eq_ignore_ascii_case(f))
            {
                return Some(located(&path.value));
            }
        }
        _ => {}
    }
    if dialect != SqlDialect::Snowflake {
        return None;
    }
    let first = ident(name.0.first()?)?;
    if !first.value.starts_with('@') {
        return None;
    }
    let mut joined = String::new();
    for part in &name.0 {
        if !joined.is_empty() {
            joined.push('.');
        }
        joined.push_str(&ident(part)?.value);
    }
    let stage_end = joined.find('/').unwrap_or(joined.len());
    let (stage, path) = joined.split_at(stage_end);
    Some(format!("{}{path}", stage.to_lowercase()))
}

/// A location as a path dataset is named: as written, with `./` before a
/// file named without a folder (so [`is_path`] knows it).
pub(crate) fn located(location: &str) -> String {
    // `https://u:pw@host/x.csv` is named `https://***@host/x.csv`: the
    // name reaches every output (diff reasons, DOT, JSON).
    let location = super::secrets::masked_text(location);
    match is_path(&location) {
        true => location.into_owned(),
        false => format!("./{location}"),
    }
}

/// Whether a relation name as [`relation_name`] prints it is a file, stage or
/// path rather than a table.
pub fn is_path(relation: &str) -> bool {
    // A table part holding `/`, `*` or `@` is printed in quotes, and a file
    // named without a folder as `./x.csv`, for this test to see.
    !relation.starts_with('"')
        && (relation.starts_with('@') || relation.contains(['/', '*']))
        && !relation.contains(".\"")
}

/// The table `IDENTIFIER('db.schema.t')` names (Snowflake, Databricks);
/// `None` for a variable or bind parameter (`IDENTIFIER($t)`, `:t`), which
/// only the run knows: never a table called `identifier`.
pub(crate) fn identifier_call(
    function: &Ident,
    args: &[FunctionArg],
    dialect: SqlDialect,
) -> Option<String> {
    if function.quote_style.is_some() || !function.value.eq_ignore_ascii_case("identifier") {
        return None;
    }
    let [FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Value(v)))] = args else {
        return None;
    };
    let (Value::SingleQuotedString(text) | Value::DoubleQuotedString(text)) = &v.value else {
        return None;
    };
    let parser_dialect = dialect.parser_dialect();
    let name = Parser::new(parser_dialect.as_ref())
        .try_with_sql(text)
        .ok()?
        .parse_object_name(false)
        .ok()?;
    if name
        .0
        .iter()
        .any(|p| !matches!(p, ObjectNamePart::Identifier(_)))
    {
        return None;
    }
    relation_name(&name, dialect)
}

/// The relation name of a dotted identifier path, as `SELECT ... INTO a.b`
/// writes one.
pub(crate) fn relation_name_of_idents(idents: &[Ident], dialect: SqlDialect) -> Option<String> {
    let mut out = String::new();
    for ident in idents {
        push_ident(&mut out, ident, dialect);
    }
    checked(out)
}

/// The name one identifier denotes, as a single part (for CTE names).
pub(crate) fn ident_name(ident: &Ident, dialect: SqlDialect) -> String {
    let mut out = String::with_capacity(ident.value.len());
    push_part(&mut out, ident.quote_style.is_some(), &ident.value, dialect);
    out
}

/// `None` for what is not a table: nothing, or a stage / variable (`@x`).
fn checked(name: String) -> Option<String> {
    if name.is_empty() || name.starts_with(['@', '.']) || name.starts_with("\"@") {
        None
    } else {
        Some(name)
    }
}

fn push_ident(out: &mut String, ident: &Ident, dialect: SqlDialect) {
    let quoted = ident.quote_style.is_some();
    if quoted && dialect.splits_quoted_paths() && ident.value.contains('.') {
        // BigQuery: `project.dataset.table` is three parts in one quote.
        for piece in ident.value.split('.') {
            push_part(out, true, piece, dialect);
        }
    } else {
        push_part(out, quoted, &ident.value, dialect);
    }
}

/// Appends one name part, dot-separated from what is there, folded the way
/// the engine folds it.
fn push_part(out: &mut String, quoted: bool, value: &str, dialect: SqlDialect) {
    if !out.is_empty() {
        out.push('.');
    }
    let fold = match (quoted, dialect.identifier_case()) {
        (false, _) | (true, IdentifierCase::Insensitive) => true,
        (true, IdentifierCase::FoldUnquotedUpper) => is_upper_plain(value),
        (true, IdentifierCase::FoldUnquotedLower) => false,
    };
    // The usual part (ASCII letters, digits, `_`, `$`) needs no quotes and
    // folds byte by byte; every column mention comes through here.
    let exact_lower = quoted
        && !fold
        && dialect.identifier_case() == IdentifierCase::FoldUnquotedUpper
        && !value.chars().any(|c| c.is_uppercase());
    if !exact_lower
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
    {
        let start = out.len();
        out.push_str(value);
        if fold {
            out[start..].make_ascii_lowercase();
        }
        return;
    }
    // Quotes keep a part that holds a dot, a quote or white space from being
    // read back as several parts. On an engine that folds unquoted names
    // to upper case, a quoted lower-case name (`"orders"`) is another
    // object than `orders` (which is `ORDERS`): quoted, it stays apart.
    let needs_quotes = exact_lower || value.chars().any(needs_quotes);
    if needs_quotes {
        out.push('"');
    }
    for c in value.chars() {
        match c {
            '"' if needs_quotes => out.push_str("\"\""),
            c if fold && c.is_ascii() => out.push(c.to_ascii_lowercase()),
            c if fold => out.extend(c.to_lowercase()),
            c => out.push(c),
        }
    }
    if needs_quotes {
        out.push('"');
    }
}

/// Whether `relation` (as ripple prints it) has a part that `dialect`, an
/// engine folding unquoted names to upper case, can only name quoted in
/// lower case (`"orders"`): ripple's SQL prints plain lower-case parts as
/// the upper-case names they fold to, so it cannot name such a table.
pub fn has_exact_lower_part(relation: &str, dialect: SqlDialect) -> bool {
    if dialect.identifier_case() != IdentifierCase::FoldUnquotedUpper {
        return false;
    }
    // A part in quotes that needs none for its characters was quoted for
    // its case (see `push_part`).
    let mut rest = relation;
    while let Some(start) = rest.find('"') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('"') else { break };
        let part = &after[..end];
        if !part.chars().any(needs_quotes) && !part.chars().any(|c| c.is_uppercase()) {
            return true;
        }
        rest = &after[end + 1..];
    }
    false
}

/// A relation named by its parts as written (dbt's `database`, `schema`,
/// `identifier`), each kept as it is: a part holding a dot, a quote or white
/// space is quoted, so it reads back as that one part (`schema='a.b'` once
/// made the plan address schema `a`, table `b`).
pub fn relation_of_parts<'a>(parts: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for part in parts {
        if !out.is_empty() {
            out.push('.');
        }
        if part.chars().any(needs_quotes) {
            out.push('"');
            out.push_str(&part.replace('"', "\"\""));
            out.push('"');
        } else {
            out.push_str(part);
        }
    }
    out
}

/// Characters that make ripple print a name part in quotes: those that would
/// read back as several parts (a dot, a quote, white space), and those that
/// mark a path (`/`, `*`, `@`), so a table is never taken for files.
fn needs_quotes(c: char) -> bool {
    matches!(c, '.' | '"' | '/' | '*' | '@') || c.is_whitespace()
}

/// A name that an upper-folding engine would also get from the unquoted form.
fn is_upper_plain(value: &str) -> bool {
    !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_' || c == '$')
}

/// The parts of a relation as ripple prints it (`a.b`, `s."x.y"`).
pub fn relation_parts(relation: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut chars = relation.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                current.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            '.' if !quoted => parts.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    parts.push(current);
    parts
}

/// Name parts printed as ripple prints relations: a part holding a dot, a
/// quote or white space is quoted (so it reads back as one part).
pub fn print_parts(parts: &[String]) -> String {
    parts
        .iter()
        .map(|p| {
            if p.chars().any(needs_quotes) {
                format!("\"{}\"", p.replace('"', "\"\""))
            } else {
                p.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// The relation a rename's new name denotes: the old name's schema (and
/// database) with the new last part, unless the new name is qualified.
pub(crate) fn qualified_like(
    old: Option<&str>,
    new: &ObjectName,
    dialect: SqlDialect,
) -> Option<String> {
    let new_rel = relation_name(new, dialect)?;
    if new.0.len() > 1 {
        return Some(new_rel);
    }
    let mut parts = relation_parts(old?);
    parts.pop();
    if parts.is_empty() {
        return Some(new_rel);
    }
    Some(format!("{}.{new_rel}", print_parts(&parts)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(parts: &[(&str, Option<char>)]) -> ObjectName {
        ObjectName(
            parts
                .iter()
                .map(|(v, q)| {
                    ObjectNamePart::Identifier(match q {
                        Some(q) => Ident::with_quote(*q, *v),
                        None => Ident::new(*v),
                    })
                })
                .collect(),
        )
    }

    #[test]
    fn unquoted_parts_fold_to_lower_case() {
        let n = name(&[("RAW", None), ("Shop", None), ("ORDERS", None)]);
        assert_eq!(
            relation_name(&n, SqlDialect::Snowflake).as_deref(),
            Some("raw.shop.orders")
        );
    }

    #[test]
    fn quoted_parts_keep_their_case_where_the_engine_does() {
        let n = name(&[("Sales", Some('"')), ("Orders", Some('"'))]);
        assert_eq!(
            relation_name(&n, SqlDialect::Postgres).as_deref(),
            Some("Sales.Orders")
        );
        assert_eq!(
            relation_name(&n, SqlDialect::MsSql).as_deref(),
            Some("sales.orders")
        );
    }

    #[test]
    fn snowflake_quoted_upper_case_equals_unquoted() {
        let upper = name(&[("ORDERS", Some('"'))]);
        let mixed = name(&[("Orders", Some('"'))]);
        assert_eq!(
            relation_name(&upper, SqlDialect::Snowflake).as_deref(),
            Some("orders")
        );
        assert_eq!(
            relation_name(&mixed, SqlDialect::Snowflake).as_deref(),
            Some("Orders")
        );
    }

    #[test]
    fn bigquery_splits_a_quoted_path() {
        let n = name(&[("proj.raw.users", Some('`'))]);
        assert_eq!(
            relation_name(&n, SqlDialect::BigQuery).as_deref(),
            Some("proj.raw.users")
        );
        let mixed = name(&[("p", Some('`')), ("d", None), ("T", None)]);
        assert_eq!(
            relation_name(&mixed, SqlDialect::BigQuery).as_deref(),
            Some("p.d.t")
        );
    }

    #[test]
    fn a_dotted_quoted_part_elsewhere_stays_one_part() {
        let n = name(&[("s", None), ("a.b", Some('"'))]);
        assert_eq!(
            relation_name(&n, SqlDialect::Postgres).as_deref(),
            Some("s.\"a.b\"")
        );
    }

    #[test]
    fn stages_are_paths_and_variables_are_not_tables() {
        // A Snowflake stage is a dataset named by its location.
        assert_eq!(
            relation_name(&name(&[("@stage", None)]), SqlDialect::Snowflake).as_deref(),
            Some("@stage")
        );
        assert!(is_path("@stage"));
        // Elsewhere `@x` is a variable: no table.
        assert_eq!(
            relation_name(&name(&[("@rows", None)]), SqlDialect::MsSql),
            None
        );
        assert_eq!(
            relation_name(&ObjectName(vec![]), SqlDialect::Generic),
            None
        );
    }
}
