//! Splitting a script into statements before parsing, so that one statement
//! that does not parse cannot swallow the rest of the file.
//!
//! The normal path tokenizes the whole script once with the dialect's own
//! tokenizer and cuts the token stream at top-level semicolons: quoting and
//! comments are then exactly the engine's. Only when the tokenizer itself
//! fails (an unterminated string, say) does a simpler character scanner find
//! the statement boundaries, so the damage stays inside one statement.

use std::collections::HashSet;

use sqlparser::dialect::Dialect;
use sqlparser::tokenizer::{Location, Token, TokenWithSpan, Tokenizer};

/// One statement's worth of script.
#[derive(Debug)]
pub(crate) struct Chunk {
    /// Where the statement's first token starts (1-based).
    pub start: Location,
    /// Its tokens, with locations in the whole script, or why it could not be
    /// tokenized.
    pub tokens: Result<Vec<TokenWithSpan>, LexError>,
}

/// A statement the tokenizer rejected.
#[derive(Debug)]
pub(crate) struct LexError {
    /// The tokenizer's reason, without its location suffix.
    pub message: String,
    /// Where it stopped (1-based, in the whole script).
    pub location: Location,
}

/// Cuts `sql` into statement chunks; empty statements are dropped.
pub(crate) fn split_statements(sql: &str, dialect: &dyn Dialect) -> Vec<Chunk> {
    match Tokenizer::new(dialect, sql).tokenize_with_location() {
        Ok(tokens) => split_tokens(tokens),
        Err(_) => split_by_scanning(sql, dialect),
    }
}

fn split_tokens(tokens: Vec<TokenWithSpan>) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    let mut current: Vec<TokenWithSpan> = Vec::new();
    let mut start: Option<Location> = None;
    for token in tokens {
        match token.token {
            Token::SemiColon => {
                if let Some(start) = start.take() {
                    chunks.push(Chunk {
                        start,
                        tokens: Ok(std::mem::take(&mut current)),
                    });
                } else {
                    current.clear();
                }
            }
            Token::Whitespace(_) => current.push(token),
            _ => {
                if start.is_none() {
                    start = Some(token.span.start);
                }
                current.push(token);
            }
        }
    }
    if let Some(start) = start {
        chunks.push(Chunk {
            start,
            tokens: Ok(current),
        });
    }
    chunks
}

/// The fallback: find statement boundaries with a quote- and comment-aware
/// scan, then tokenize each statement on its own.
fn split_by_scanning(sql: &str, dialect: &dyn Dialect) -> Vec<Chunk> {
    let backslash = dialect.supports_string_literal_backslash_escape();
    let mut chunks = Vec::new();
    let mut lines = LineIndex::new(sql);
    for range in statement_ranges(sql, backslash) {
        let text = &sql[range.clone()];
        let origin = lines.location(range.start);
        match Tokenizer::new(dialect, text).tokenize_with_location() {
            Ok(mut tokens) => {
                for t in &mut tokens {
                    t.span.start = shift(t.span.start, origin);
                    t.span.end = shift(t.span.end, origin);
                }
                let chunk = split_tokens(tokens);
                chunks.extend(chunk);
            }
            Err(e) => {
                let leading = text.len() - text.trim_start().len();
                chunks.push(Chunk {
                    start: lines.location(range.start + leading),
                    tokens: Err(LexError {
                        message: e.message,
                        location: shift(e.location, origin),
                    }),
                });
            }
        }
    }
    chunks
}

/// Moves a location inside a statement to the same place in the script.
fn shift(loc: Location, origin: Location) -> Location {
    if loc.line == 0 {
        return origin;
    }
    let column = if loc.line == 1 {
        loc.column + origin.column - 1
    } else {
        loc.column
    };
    Location {
        line: loc.line + origin.line - 1,
        column,
    }
}

/// Byte ranges of the statements in `sql`, cut at semicolons outside quotes
/// and comments. Linear time on any input: a quote or comment that never
/// closes is taken as plain text, and so is every later one of its kind
/// (it cannot close either).
fn statement_ranges(sql: &str, backslash: bool) -> Vec<std::ops::Range<usize>> {
    let b = sql.as_bytes();
    let n = b.len();
    let mut ranges = Vec::new();
    let mut start = 0;
    let mut i = 0;
    let mut unclosed_quotes: Vec<u8> = Vec::new();
    let mut unclosed_comment = false;
    let mut unclosed_tags: HashSet<&[u8]> = HashSet::new();
    while i < n {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') if !unclosed_quotes.contains(&q) => {
                match closing_quote(b, i + 1, q, backslash) {
                    Some(j) => i = j + 1,
                    None => {
                        unclosed_quotes.push(q);
                        i += 1;
                    }
                }
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                i = memchr(b, i, b'\n').unwrap_or(n);
            }
            b'/' if b.get(i + 1) == Some(&b'*') && !unclosed_comment => {
                match find(b, i + 2, b"*/") {
                    Some(j) => i = j + 2,
                    None => {
                        unclosed_comment = true;
                        i += 2;
                    }
                }
            }
            b'$' => match dollar_tag(b, i) {
                Some(tag) if !unclosed_tags.contains(tag) => match find(b, i + tag.len(), tag) {
                    Some(j) => i = j + tag.len(),
                    None => {
                        unclosed_tags.insert(tag);
                        i += 1;
                    }
                },
                _ => i += 1,
            },
            b';' => {
                ranges.push(start..i);
                i += 1;
                start = i;
            }
            _ => i += 1,
        }
    }
    ranges.push(start..n);
    ranges.retain(|r| !sql[r.clone()].trim().is_empty());
    ranges
}

fn closing_quote(b: &[u8], mut j: usize, q: u8, backslash: bool) -> Option<usize> {
    while j < b.len() {
        if backslash && b[j] == b'\\' {
            j += 2;
        } else if b[j] == q {
            return Some(j);
        } else {
            j += 1;
        }
    }
    None
}

/// `$tag$` or `$$` starting at `i`, as PostgreSQL-style dollar quoting writes it.
fn dollar_tag(b: &[u8], i: usize) -> Option<&[u8]> {
    let mut j = i + 1;
    while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
        j += 1;
    }
    // `$1` is a placeholder, not a tag.
    if j < b.len() && b[j] == b'$' && !b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        Some(&b[i..=j])
    } else {
        None
    }
}

fn memchr(b: &[u8], from: usize, c: u8) -> Option<usize> {
    b[from..].iter().position(|&x| x == c).map(|p| p + from)
}

fn find(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    if from > b.len() {
        return None;
    }
    b[from..]
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

/// Byte offset → 1-based line and character column, for offsets asked in
/// increasing order (each call scans only what the previous one did not).
struct LineIndex<'a> {
    text: &'a str,
    offset: usize,
    line: u64,
    line_start: usize,
}

impl<'a> LineIndex<'a> {
    fn new(text: &'a str) -> Self {
        LineIndex {
            text,
            offset: 0,
            line: 1,
            line_start: 0,
        }
    }

    fn location(&mut self, offset: usize) -> Location {
        let bytes = self.text.as_bytes();
        while self.offset < offset {
            if bytes[self.offset] == b'\n' {
                self.line += 1;
                self.line_start = self.offset + 1;
            }
            self.offset += 1;
        }
        let column = self.text[self.line_start..offset].chars().count() as u64 + 1;
        Location {
            line: self.line,
            column,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::{GenericDialect, MySqlDialect, PostgreSqlDialect};

    fn starts(sql: &str, dialect: &dyn Dialect) -> Vec<(u64, u64, bool)> {
        split_statements(sql, dialect)
            .iter()
            .map(|c| (c.start.line, c.start.column, c.tokens.is_ok()))
            .collect()
    }

    #[test]
    fn cuts_at_top_level_semicolons_only() {
        let sql = "select ';' from a;\n  select 1 /* ; */ from b; -- ;\n\n;select 2";
        assert_eq!(
            starts(sql, &GenericDialect {}),
            vec![(1, 1, true), (2, 3, true), (4, 2, true)]
        );
    }

    #[test]
    fn dollar_quoted_bodies_stay_whole() {
        let sql =
            "create function f() returns int as $$ select 1; select 2; $$ language sql;\nselect 3";
        assert_eq!(
            starts(sql, &PostgreSqlDialect {}),
            vec![(1, 1, true), (2, 1, true)]
        );
    }

    #[test]
    fn an_unterminated_string_does_not_swallow_later_statements() {
        let sql = "select 1 from a;\nselect 'oops from b;\nselect 3 from c;";
        let chunks = split_statements(sql, &GenericDialect {});
        assert_eq!(chunks.len(), 3);
        let err = chunks[1].tokens.as_ref().unwrap_err();
        assert_eq!((err.location.line, err.location.column), (2, 8));
        assert!(err.message.contains("Unterminated"), "{}", err.message);
        let last = chunks[2].tokens.as_ref().unwrap();
        let first = last
            .iter()
            .find(|t| !matches!(t.token, Token::Whitespace(_)));
        assert_eq!(first.unwrap().span.start, Location { line: 3, column: 1 });
    }

    #[test]
    fn backslash_escapes_follow_the_dialect() {
        let sql = "select 'it\\'s; fine' from a; select 'x";
        let chunks = split_statements(sql, &MySqlDialect {});
        assert_eq!(chunks.len(), 2);
        assert!(chunks[0].tokens.is_ok());
        assert!(chunks[1].tokens.is_err());
    }

    #[test]
    fn ranges_are_linear_on_hostile_input() {
        let sql = "'\"`/*$a$".repeat(20_000);
        let ranges = statement_ranges(&sql, true);
        assert_eq!(ranges.len(), 1);
    }

    #[test]
    fn empty_and_comment_only_scripts_have_no_statements() {
        assert!(split_statements("", &GenericDialect {}).is_empty());
        assert!(split_statements(" ;; -- x\n/* y */ ;", &GenericDialect {}).is_empty());
    }
}
