//! `--schema FILE`: the columns of tables a script reads, for column
//! lineage to resolve unqualified names and expand `*`.
//!
//! The file is JSON or YAML (YAML holds JSON), a mapping of table name to
//! the list of its columns in table order: `{"sales.orders": ["id",
//! "amount"]}`. Order matters (`INSERT INTO t SELECT *` fills columns by
//! position), which is why a mapping of column to type, whose order JSON
//! does not keep, is refused with a message saying so.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};
use crate::sql::{KnownColumns, SqlDialect, relation_name_of};

/// The columns `path` declares, names folded the way `dialect` folds them.
pub fn read_schema(path: &Path, dialect: SqlDialect) -> Result<KnownColumns> {
    let text = crate::input::read_text(path)?;
    let bad = |line: u32, column: u32, message: String| Error::Schema {
        path: path.to_path_buf(),
        line,
        column,
        message,
    };
    if text.trim().is_empty() {
        return Ok(KnownColumns::new());
    }
    // JSON as JSON: a warehouse's schema can hold millions of columns,
    // past what ripple lets one YAML file expand to.
    let json = serde_json::from_str::<BTreeMap<String, serde_json::Value>>(&text).ok();
    let parsed: BTreeMap<String, serde_json::Value> = match json {
        Some(parsed) => parsed,
        None => crate::config::yaml_from_str(&text).map_err(|e| {
            let (line, column, reason) = crate::config::yaml_error(&e);
            bad(
                line,
                column,
                format!(
                    "{reason}; a schema file maps each table to the list of its columns, e.g. {{\"sales.orders\": [\"id\", \"amount\"]}}"
                ),
            )
        })?,
    };
    let mut known = KnownColumns::new();
    for (table, columns) in parsed {
        let relation = name(&table, dialect).ok_or_else(|| {
            bad(
                0,
                0,
                format!("`{table}` is not a table name; write it as SQL names it (`schema.table`)"),
            )
        })?;
        let serde_json::Value::Array(list) = columns else {
            return Err(bad(
                0,
                0,
                format!(
                    "the columns of `{table}` must be a list in table order (`[\"id\", \"amount\"]`); a mapping of column to type loses the order `*` needs"
                ),
            ));
        };
        let mut names = Vec::with_capacity(list.len());
        for c in list {
            let folded = c.as_str().and_then(|c| name(c, dialect)).ok_or_else(|| {
                bad(
                    0,
                    0,
                    format!("`{table}` lists {c}, which is not a column name"),
                )
            })?;
            names.push(folded);
        }
        known.insert(relation, names);
    }
    Ok(known)
}

/// `text` parsed as a (possibly quoted, possibly dotted) SQL name, folded.
fn name(text: &str, dialect: SqlDialect) -> Option<String> {
    let parser_dialect = dialect.parser_dialect();
    let mut parser = sqlparser::parser::Parser::new(parser_dialect.as_ref())
        .try_with_sql(text)
        .ok()?;
    let parsed = parser.parse_object_name(false).ok()?;
    if parser.peek_token().token != sqlparser::tokenizer::Token::EOF {
        return None;
    }
    relation_name_of(&parsed, dialect)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, ext: &str) -> Result<KnownColumns> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(format!("schema.{ext}"));
        std::fs::write(&path, text).unwrap();
        read_schema(&path, SqlDialect::Postgres)
    }

    #[test]
    fn json_and_yaml_give_folded_names_in_order() {
        let json = read(r#"{"Sales.Orders": ["ID", "amount", "\"Mixed\""]}"#, "json").unwrap();
        let yaml = read("Sales.Orders: [ID, amount, '\"Mixed\"']\n", "yml").unwrap();
        assert_eq!(json, yaml);
        assert_eq!(json["sales.orders"], ["id", "amount", "Mixed"]);
    }

    #[test]
    fn bad_files_say_where_and_what_to_do() {
        let err = read("{\"a\": [\"x\",\n  }", "json")
            .unwrap_err()
            .to_string();
        assert!(err.contains("schema.json:1:7: mismatched bracket"), "{err}");
        assert!(err.contains("list of its columns"), "{err}");
        let err = read("a: {x: int, y: text}\n", "yml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("must be a list in table order"), "{err}");
        let err = read("\"a b c\": [x]\n", "yml").unwrap_err().to_string();
        assert!(err.contains("is not a table name"), "{err}");
        let err = read("a: [1]\n", "yml").unwrap_err().to_string();
        assert!(err.contains("not a column name"), "{err}");
    }
}
