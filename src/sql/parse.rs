//! The one guarded way into sqlparser for code outside statement lineage:
//! the script is cut into statements, each is held to the token and
//! set-operation limits, and parsing, the caller's work on the AST and
//! dropping it all run on a stack sized to the script (deep operator chains
//! recurse in the visitor and in drop glue alike), mapped only where it
//! fits under an address-space limit.

use sqlparser::ast::Statement;

use super::dialect::SqlDialect;
use super::script::{StatementError, deep_parser, on_statement_stack, too_large};
use super::split::{Chunk, split_statements};

/// Parses every statement of `sql` and hands them to `work`, whose result
/// is returned; the first statement that does not tokenize, is too large or
/// does not parse is the error instead (with its 1-based position), as is
/// the largest when the stack and memory the script needs cannot be had.
pub fn with_statements<R>(
    sql: &str,
    dialect: SqlDialect,
    work: impl FnOnce(&mut Vec<Statement>) -> R,
) -> Result<R, StatementError> {
    with_located_statements(sql, dialect, |statements, _| work(statements))
}

/// [`with_statements`], with the 1-based line each statement starts on:
/// some statements (`SET`) carry no place of their own in the parse tree.
pub fn with_located_statements<R>(
    sql: &str,
    dialect: SqlDialect,
    work: impl FnOnce(&mut Vec<Statement>, &[u64]) -> R,
) -> Result<R, StatementError> {
    let parser_dialect = dialect.parser_dialect();
    let mut chunks = Vec::new();
    let mut total = 0usize;
    // The largest statement: its position, where it starts and its size.
    let mut largest = (1, 1, 1, 0);
    for (n, chunk) in split_statements(sql, parser_dialect.as_ref()).enumerate() {
        let Chunk {
            start,
            significant,
            tokens,
        } = chunk;
        let tokens = tokens.map_err(|e| StatementError {
            statement: n + 1,
            line: e.location.line,
            column: e.location.column,
            message: e.message,
        })?;
        if let Some(message) = too_large(significant, &tokens) {
            return Err(StatementError {
                statement: n + 1,
                line: start.line,
                column: start.column,
                message,
            });
        }
        if significant > largest.3 {
            largest = (n + 1, start.line, start.column, significant);
        }
        total = total.saturating_add(significant);
        chunks.push((start, tokens));
    }
    on_statement_stack(total, move || {
        let mut statements = Vec::new();
        let mut lines = Vec::new();
        for (n, (start, tokens)) in chunks.into_iter().enumerate() {
            let mut parser =
                deep_parser(parser_dialect.as_ref()).with_tokens_with_locations(tokens);
            let parsed = parser.parse_statements().map_err(|e| StatementError {
                statement: n + 1,
                line: start.line,
                column: start.column,
                message: e.to_string(),
            })?;
            lines.resize(lines.len() + parsed.len(), start.line);
            statements.extend(parsed);
        }
        Ok(work(&mut statements, &lines))
    })
    .unwrap_or_else(|message| {
        Err(StatementError {
            statement: largest.0,
            line: largest.1,
            column: largest.2,
            message,
        })
    })
}

/// Parses each statement of `sql` on its own and hands every one that
/// parses to `work`, with the 1-based line it starts on; a statement that
/// does not tokenize, is too large, cannot have its stack or does not parse
/// is skipped, and the rest still reach `work` (DDL read for facts: one bad
/// statement hides nothing else).
pub fn for_each_statement(sql: &str, dialect: SqlDialect, mut work: impl FnMut(u64, &Statement)) {
    let parser_dialect = dialect.parser_dialect();
    for chunk in split_statements(sql, parser_dialect.as_ref()) {
        let Chunk {
            start,
            significant,
            tokens,
        } = chunk;
        let Ok(tokens) = tokens else { continue };
        if too_large(significant, &tokens).is_some() {
            continue;
        }
        let _skipped = on_statement_stack(significant, || {
            let mut parser =
                deep_parser(parser_dialect.as_ref()).with_tokens_with_locations(tokens);
            if let Ok(parsed) = parser.parse_statements() {
                for s in &parsed {
                    work(start.line, s);
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_reach_the_work_and_errors_name_the_statement() {
        let n = with_statements("select 1; select 2", SqlDialect::Postgres, |s| s.len());
        assert_eq!(n, Ok(2));
        let err =
            with_statements("select 1; select (1", SqlDialect::Postgres, |s| s.len()).unwrap_err();
        assert_eq!(err.statement, 2);
    }

    #[test]
    fn a_deep_expression_does_not_overflow_the_stack() {
        let sql = format!("select {}1", "1 + ".repeat(20_000));
        let n = with_statements(&sql, SqlDialect::Generic, |s| s.len());
        assert_eq!(n, Ok(1));
    }
}
