//! Splitting a script into statements before parsing, so that one statement
//! that does not parse cannot swallow the rest of the file.
//!
//! A cheap character scanner proposes the cuts (semicolons outside quotes and
//! comments); each statement is then tokenized by the dialect's own tokenizer
//! and parsed while its tokens are still in cache, which keeps the whole
//! pipeline within a few percent of a bare parse. The scanner knows less than
//! the dialect, so every proposal is checked against the tokens:
//!
//! - a statement whose tokens hold a `;` was cut too little: the tokens are
//!   cut again at those semicolons;
//! - a statement that fails to tokenize, or ends inside a line comment (the
//!   scanner cut through a comment style it does not know, `#` or `//`), may
//!   have been cut too much: from there on, the rest of the script is
//!   tokenized whole and cut at its top-level semicolon tokens, which is
//!   exact. Only if that fails too (the script really holds an unterminated
//!   string) does the scanner's cut stand, so the damage stays in one
//!   statement.

use std::collections::{HashSet, VecDeque};
use std::ops::Range;

use sqlparser::dialect::Dialect;
use sqlparser::tokenizer::{Location, Span, Token, TokenWithSpan, Tokenizer, Whitespace};

/// One statement's worth of script.
#[derive(Debug)]
pub(crate) struct Chunk {
    /// Where the statement's first token starts (1-based).
    pub start: Location,
    /// How many of its tokens are not white space or comments.
    pub significant: usize,
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

/// How many statements `sql` holds, as the cheap scanner cuts them (at
/// semicolons outside quotes and comments; empty ones not counted): what a
/// bound on statements can go by before anything is tokenized.
pub fn statement_count(sql: &str, dialect: crate::sql::SqlDialect) -> usize {
    statement_ranges(sql, dialect.parser_dialect().as_ref()).len()
}

/// The statements of `sql`, in order, tokenized one at a time as they are
/// asked for; empty statements are skipped.
pub(crate) fn split_statements<'a>(sql: &'a str, dialect: &'a dyn Dialect) -> Statements<'a> {
    Statements {
        sql,
        dialect,
        lines: LineIndex::new(sql),
        ranges: statement_ranges(sql, dialect).into_iter(),
        pending: VecDeque::new(),
    }
}

/// Iterator over a script's statements; see [`split_statements`].
pub(crate) struct Statements<'a> {
    sql: &'a str,
    dialect: &'a dyn Dialect,
    lines: LineIndex<'a>,
    ranges: std::vec::IntoIter<Range<usize>>,
    pending: VecDeque<Chunk>,
}

impl Iterator for Statements<'_> {
    type Item = Chunk;

    fn next(&mut self) -> Option<Chunk> {
        loop {
            if let Some(chunk) = self.pending.pop_front() {
                return Some(chunk);
            }
            let range = self.ranges.next()?;
            let origin = self.lines.location(range.start);
            if let Some(chunk) = self.too_many_tokens(range.clone(), origin) {
                return Some(chunk);
            }
            let cut_by_semicolon = range.end < self.sql.len();
            match Tokenizer::new(self.dialect, &self.sql[range.clone()]).tokenize_with_location() {
                Ok(mut tokens) if !(cut_by_semicolon && ends_in_line_comment(&tokens)) => {
                    settle(&mut tokens, origin);
                    self.pending.extend(split_tokens(tokens));
                }
                _ => {
                    let rest = range.start..self.sql.len();
                    self.ranges = Vec::new().into_iter();
                    self.exact(rest, origin);
                }
            }
        }
    }
}

impl Statements<'_> {
    /// Cuts `range` exactly: tokenized whole, cut at semicolon tokens; if
    /// even that fails, each scanner proposal on its own, errors and all.
    fn exact(&mut self, range: Range<usize>, origin: Location) {
        let text = &self.sql[range.clone()];
        // The rest of a long script tokenized whole could take far more
        // memory than any statement of it: then the scanner's cuts stand.
        let whole = token_floor(text.as_bytes(), self.dialect).0 <= MAX_TEXT_TOKENS;
        if let Some(mut tokens) = whole
            .then(|| {
                Tokenizer::new(self.dialect, text)
                    .tokenize_with_location()
                    .ok()
            })
            .flatten()
        {
            settle(&mut tokens, origin);
            self.pending.extend(split_tokens(tokens));
            return;
        }
        for sub in statement_ranges(text, self.dialect) {
            let sub = range.start + sub.start..range.start + sub.end;
            let text = &self.sql[sub.clone()];
            let origin = self.lines.location(sub.start);
            if let Some(chunk) = self.too_many_tokens(sub.clone(), origin) {
                self.pending.push_back(chunk);
                continue;
            }
            match Tokenizer::new(self.dialect, text).tokenize_with_location() {
                Ok(mut tokens) => {
                    settle(&mut tokens, origin);
                    self.pending.extend(split_tokens(tokens));
                }
                Err(e) => {
                    let leading = text.len() - text.trim_start().len();
                    self.pending.push_back(Chunk {
                        start: self.lines.location(sub.start + leading),
                        significant: 0,
                        tokens: Err(LexError {
                            message: e.message,
                            location: shift(e.location, origin),
                        }),
                    });
                }
            }
        }
    }
}

impl Statements<'_> {
    /// The error for a proposal too long to tokenize, if `range` is one:
    /// the tokenizer builds every token before any can be counted (about
    /// 110 bytes of memory a byte of SQL), so a statement past the bounds is
    /// told by a cheap count first.
    fn too_many_tokens(&mut self, range: Range<usize>, origin: Location) -> Option<Chunk> {
        if range.len() <= MAX_STATEMENT_TOKENS {
            return None;
        }
        let (all, significant) = token_floor(&self.sql.as_bytes()[range.clone()], self.dialect);
        if all <= MAX_TEXT_TOKENS && significant <= MAX_STATEMENT_TOKENS {
            return None;
        }
        let text = &self.sql[range.clone()];
        let leading = text.len() - text.trim_start().len();
        Some(Chunk {
            start: self.lines.location(range.start + leading),
            significant: 0,
            tokens: Err(LexError {
                message: format!(
                    "statement too large to analyse (at least {significant} tokens, {all} with white space, in {} bytes; the limits are {} and {MAX_TEXT_TOKENS}); split it, ending statements with `;`",
                    range.len(),
                    MAX_STATEMENT_TOKENS
                ),
                location: origin,
            }),
        })
    }
}

/// Statements longer than this are reported, not analysed: they would need
/// an unreasonable stack (about 5 MB of SQL in one statement).
pub(crate) const MAX_STATEMENT_TOKENS: usize = 1_000_000;

/// Tokens, white space included (the tokenizer makes one per blank
/// character), one statement's text may hold before it is tokenized: about
/// 600 MB of tokens at most, for a moment.
pub(crate) const MAX_TEXT_TOKENS: usize = 8_000_000;

/// At least how many tokens the tokenizer makes of `b`, all and those not
/// white space or comments: every blank is one, a word or number one, a
/// quoted string or comment one, and a run of punctuation one a three bytes
/// (the longest operators, `->>`, `<=>`). A floor, so that a statement
/// refused by it really is past the bound.
fn token_floor(b: &[u8], dialect: &dyn Dialect) -> (usize, usize) {
    let hash_comments = dialect.supports_hash_comment();
    let backslash = dialect.supports_string_literal_backslash_escape();
    // `.` goes with words: `1.5e3`, `.5` are one number, `s.t` three
    // tokens (counted as one: a floor).
    let word = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.') || c >= 0x80;
    // `#` ends a name where it starts a comment.
    let name_part = |c: u8| matches!(c, b'$' | b'@') || (c == b'#' && !hash_comments);
    let (mut all, mut significant) = (0usize, 0usize);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            all += 1;
            i += 1;
        } else if let Some(tag) = (c == b'$').then(|| dollar_tag(b, i)).flatten() {
            i = find(b, i + tag.len(), tag).map_or(b.len(), |j| j + tag.len());
            all += 1;
            significant += 1;
        } else if word(c) || (c == b'$' && b.get(i + 1).is_some_and(|&n| word(n))) {
            // Dialects let `$`, `#` and `@` go on a name (`a#b`, `t$1`,
            // `@v`).
            i += 1;
            while i < b.len() && (word(b[i]) || name_part(b[i])) {
                i += 1;
            }
            // `x'ff'`, `e'..'`, `n'..'`: a prefixed literal is one token.
            if let Some(&q @ (b'\'' | b'"')) = b.get(i) {
                i = past_quoted(b, i, q, backslash);
            }
            all += 1;
            significant += 1;
        } else if matches!(c, b'\'' | b'"' | b'`' | b'[') {
            // No escapes: a backslash-escaped quote ends the string early,
            // which can only count fewer tokens.
            i = match c {
                b'[' => past_quoted(b, i, b']', false),
                _ => past_quoted(b, i, c, backslash),
            };
            all += 1;
            significant += 1;
        } else if ((c == b'#' && !hash_comments) || c == b'@')
            && b.get(i + 1)
                .is_some_and(|&n| word(n) || n.is_ascii_whitespace())
        {
            // Some dialects start a name at `#` or `@` and run it on over
            // blanks (`@\nx` is one word to the generic tokenizer): one.
            i += 1;
            while i < b.len() && (word(b[i]) || b[i].is_ascii_whitespace() || name_part(b[i])) {
                i += 1;
            }
            all += 1;
            significant += 1;
        } else if (c == b'-' && b.get(i + 1) == Some(&b'-')) || (c == b'#' && hash_comments) {
            i = memchr(b, i, b'\n').unwrap_or(b.len());
            all += 1;
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i = find(b, i + 2, b"*/").map_or(b.len(), |j| j + 2);
            all += 1;
        } else {
            // A run of punctuation ends where a word, a quote or a comment
            // starts: what follows is counted by its own kind.
            let from = i;
            i += 1;
            while i < b.len()
                && !(b[i].is_ascii_whitespace()
                    || word(b[i])
                    || matches!(b[i], b'\'' | b'"' | b'`' | b'[' | b'$')
                    || (b[i] == b'#' && hash_comments)
                    || (b[i] == b'-' && b.get(i + 1) == Some(&b'-'))
                    || (b[i] == b'/' && b.get(i + 1) == Some(&b'*')))
            {
                i += 1;
            }
            let n = (i - from).div_ceil(3);
            all += n;
            significant += n;
        }
    }
    (all, significant)
}

/// Where the quoted text opening at `i` ends: past its closing `close`,
/// a doubled one (`'it''s'`) staying inside.
fn past_quoted(b: &[u8], i: usize, close: u8, backslash: bool) -> usize {
    let mut j = i + 1;
    while j < b.len() {
        // A backslash escapes the next byte; a doubled quote is one.
        if (backslash && b[j] == b'\\') || (b[j] == close && b.get(j + 1) == Some(&close)) {
            j += 2;
        } else if b[j] == close {
            return j + 1;
        } else {
            j += 1;
        }
    }
    b.len()
}

/// A line comment right before the cut means the cut was inside it.
fn ends_in_line_comment(tokens: &[TokenWithSpan]) -> bool {
    matches!(
        tokens.last(),
        Some(TokenWithSpan {
            token: Token::Whitespace(Whitespace::SingleLineComment { .. }),
            ..
        })
    )
}

/// Folds each run of blanks (spaces, tabs, newlines) into one token.
///
/// sqlparser's tokenizer gives every space its own token, and every parser
/// step skips over them one by one; indented SQL is half blanks, so this
/// halves the parser's walk. Only whether a blank is there, and whether it
/// holds a newline (string concatenation across lines), matters to the
/// parser, and both are kept; comments stay as they are.
fn fold_blanks(tokens: &mut Vec<TokenWithSpan>) {
    let blank = |t: &Token| {
        matches!(
            t,
            Token::Whitespace(Whitespace::Space | Whitespace::Tab | Whitespace::Newline)
        )
    };
    tokens.dedup_by(|next, kept| {
        if !(blank(&next.token) && blank(&kept.token)) {
            return false;
        }
        if next.token == Token::Whitespace(Whitespace::Newline) {
            kept.token = Token::Whitespace(Whitespace::Newline);
        }
        kept.span.end = next.span.end;
        true
    });
}

/// Readies a statement's tokens for the parser: blanks folded, locations
/// moved to the same place in the whole script.
fn settle(tokens: &mut Vec<TokenWithSpan>, origin: Location) {
    fold_blanks(tokens);
    if origin == (Location { line: 1, column: 1 }) {
        return;
    }
    for t in tokens {
        t.span.start = shift(t.span.start, origin);
        t.span.end = shift(t.span.end, origin);
    }
}

fn split_tokens(tokens: Vec<TokenWithSpan>) -> Vec<Chunk> {
    // Find the cuts first, so each statement's tokens move into a vector of
    // exactly their size: no regrowth, one copy per token.
    struct Cut {
        from: usize,
        to: usize,
        start: Option<Location>,
        significant: usize,
    }
    let mut cuts: Vec<Cut> = Vec::new();
    let mut cut = Cut {
        from: 0,
        to: 0,
        start: None,
        significant: 0,
    };
    // `GO` alone on its line ends a T-SQL batch (sqlcmd, SSMS): a cut, as
    // `;` is. Elsewhere it would be a table alias on a line of its own.
    let has_go = tokens
        .iter()
        .any(|t| matches!(&t.token, Token::Word(w) if w.value.eq_ignore_ascii_case("go")));
    let significant: Vec<usize> = match has_go {
        true => tokens
            .iter()
            .enumerate()
            .filter(|(_, t)| !matches!(t.token, Token::Whitespace(_)))
            .map(|(i, _)| i)
            .collect(),
        false => Vec::new(),
    };
    let batch_end = |k: usize| -> bool {
        let t = &tokens[significant[k]];
        let Token::Word(w) = &t.token else {
            return false;
        };
        let line = t.span.start.line;
        w.quote_style.is_none()
            && w.value.eq_ignore_ascii_case("go")
            && (k == 0 || tokens[significant[k - 1]].span.end.line < line)
            && significant
                .get(k + 1)
                .is_none_or(|&n| tokens[n].span.start.line > line)
    };
    let go: std::collections::HashSet<usize> = (0..significant.len())
        .filter(|&k| batch_end(k))
        .map(|k| significant[k])
        .collect();
    for (i, token) in tokens.iter().enumerate() {
        match token.token {
            _ if token.token == Token::SemiColon || go.contains(&i) => {
                let next = Cut {
                    from: i + 1,
                    to: 0,
                    start: None,
                    significant: 0,
                };
                cuts.push(Cut {
                    to: i,
                    ..std::mem::replace(&mut cut, next)
                });
            }
            Token::Whitespace(_) => {}
            _ => {
                cut.start.get_or_insert(token.span.start);
                cut.significant += 1;
            }
        }
    }
    if cuts.is_empty() {
        // The usual case: the scanner's cut was right, the tokens are one
        // statement and move as they are.
        return match cut.start {
            Some(start) => vec![Chunk {
                start,
                significant: cut.significant,
                tokens: Ok(tokens),
            }],
            None => Vec::new(),
        };
    }
    cut.to = tokens.len();
    cuts.push(cut);
    let mut iter = tokens.into_iter();
    let mut chunks = Vec::with_capacity(cuts.len());
    for cut in cuts {
        let body: Vec<TokenWithSpan> = iter.by_ref().take(cut.to - cut.from).collect();
        // The semicolon itself.
        iter.next();
        if let Some(start) = cut.start {
            chunks.push(Chunk {
                start,
                significant: cut.significant,
                tokens: Ok(body),
            });
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
fn statement_ranges(sql: &str, dialect: &dyn Dialect) -> Vec<Range<usize>> {
    let backslash = dialect.supports_string_literal_backslash_escape();
    let hash_comments = dialect.supports_hash_comment();
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
            q @ (b'\'' | b'"' | b'`' | b'[') if !unclosed_quotes.contains(&q) => {
                let close = if q == b'[' { b']' } else { q };
                match closing_quote(b, i + 1, close, backslash && q != b'[') {
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
            b'#' if hash_comments => {
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

/// Joins the chunks of a `CREATE PROCEDURE ... BEGIN ... END` (T-SQL,
/// BigQuery, Snowflake scripting) back into one: the semicolons inside its
/// body end the body's statements, not the procedure.
pub(crate) fn join_blocks(chunks: impl Iterator<Item = Chunk>) -> impl Iterator<Item = Chunk> {
    let mut chunks = chunks.peekable();
    std::iter::from_fn(move || {
        let mut chunk = chunks.next()?;
        let Ok(tokens) = &chunk.tokens else {
            return Some(chunk);
        };
        if !opens_procedure(tokens) {
            return Some(chunk);
        }
        let mut depth = block_depth(tokens);
        while depth > 0 {
            let Some(Chunk {
                significant,
                tokens: Ok(more),
                ..
            }) = chunks.next_if(|c| c.tokens.is_ok())
            else {
                break;
            };
            depth += block_depth(&more);
            if let Ok(tokens) = &mut chunk.tokens {
                let at = more.first().map_or(Span::empty(), |t| t.span);
                tokens.push(TokenWithSpan::new(Token::SemiColon, at));
                tokens.extend(more);
            }
            chunk.significant += significant + 1;
        }
        if let Ok(tokens) = &mut chunk.tokens {
            add_as_before_body(tokens);
        }
        Some(chunk)
    })
}

/// BigQuery writes `CREATE PROCEDURE p() BEGIN ... END`; sqlparser reads
/// only `... p() AS BEGIN ... END`: the `AS` is added where it is missing.
fn add_as_before_body(tokens: &mut Vec<TokenWithSpan>) {
    let word = |t: &TokenWithSpan, w: &str| matches!(&t.token, Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w));
    let Some(begin) = tokens.iter().position(|t| word(t, "BEGIN")) else {
        return;
    };
    let before = tokens[..begin]
        .iter()
        .rev()
        .find(|t| !matches!(t.token, Token::Whitespace(_)));
    if before.is_some_and(|t| matches!(t.token, Token::RParen)) {
        let span = tokens[begin].span;
        tokens.insert(
            begin,
            TokenWithSpan::new(Token::Whitespace(Whitespace::Space), span),
        );
        tokens.insert(begin, TokenWithSpan::new(Token::make_keyword("AS"), span));
    }
}

/// Whether `tokens` start `CREATE [OR REPLACE | OR ALTER] PROC[EDURE]`
/// (checked on every statement: no allocation).
fn opens_procedure(tokens: &[TokenWithSpan]) -> bool {
    let mut words = tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .map(|t| match &t.token {
            Token::Word(w) if w.quote_style.is_none() => w.value.as_str(),
            _ => "",
        });
    let is = |w: Option<&str>, options: &[&str]| {
        w.is_some_and(|w| options.iter().any(|o| w.eq_ignore_ascii_case(o)))
    };
    if !is(words.next(), &["CREATE"]) {
        return false;
    }
    let second = words.next();
    if is(second, &["PROCEDURE", "PROC"]) {
        return true;
    }
    is(second, &["OR"])
        && is(words.next(), &["REPLACE", "ALTER"])
        && is(words.next(), &["PROCEDURE", "PROC"])
}

/// `BEGIN` and `CASE` open a block, `END` closes one (`END IF`, `END
/// LOOP`, `END WHILE` close what ripple does not count); `BEGIN TRAN`,
/// `BEGIN TRANSACTION` open none.
fn block_depth(tokens: &[TokenWithSpan]) -> i64 {
    let words: Vec<String> = tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .map(|t| match &t.token {
            Token::Word(w) if w.quote_style.is_none() => w.value.to_ascii_uppercase(),
            _ => String::new(),
        })
        .collect();
    let mut depth = 0i64;
    for (i, w) in words.iter().enumerate() {
        let next = words.get(i + 1).map_or("", String::as_str);
        match w.as_str() {
            "BEGIN" if !matches!(next, "TRAN" | "TRANSACTION" | "WORK") => depth += 1,
            // `END CASE` closes a CASE statement: its CASE opens nothing.
            "CASE" if i == 0 || words[i - 1] != "END" => depth += 1,
            "END" if !matches!(next, "IF" | "LOOP" | "WHILE" | "REPEAT" | "FOR") => depth -= 1,
            _ => {}
        }
    }
    depth
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::{GenericDialect, MySqlDialect, PostgreSqlDialect, SnowflakeDialect};

    fn starts(sql: &str, dialect: &dyn Dialect) -> Vec<(u64, u64, bool)> {
        split_statements(sql, dialect)
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
        let chunks: Vec<_> = split_statements(sql, &GenericDialect {}).collect();
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
        let chunks: Vec<_> = split_statements(sql, &MySqlDialect {}).collect();
        assert_eq!(chunks.len(), 2);
        assert!(chunks[0].tokens.is_ok());
        assert!(chunks[1].tokens.is_err());
    }

    #[test]
    fn the_token_floor_never_counts_more_than_the_tokenizer_makes() {
        use sqlparser::dialect::MsSqlDialect;
        let cases: [(&dyn Dialect, &str); 6] = [
            (
                &PostgreSqlDialect {},
                "select a, b::int, c->>'k' from s.t where x <= 1 and y <> 'it''s' -- note\n",
            ),
            (
                &PostgreSqlDialect {},
                "select $$ a ; b c d $$, $tag$ x y $tag$ from t /* a b c */ where a->'x' @> '{}' and $1 = e'\\''",
            ),
            (
                &MsSqlDialect {},
                "select [a b], \"q r\", @v, #tmp.x from [db].[t] where ((((1))))=-1.5e3",
            ),
            (
                &MySqlDialect {},
                "insert into t select 1+1+1-1*2/3%4 || 'x', `s t`, 'u\\'v', x'ff' from a # b c\n",
            ),
            (&GenericDialect {}, "select   \t\n  x  from\n\n\t y  "),
            (&GenericDialect {}, "select n'é', .5, t.c from é"),
        ];
        for (d, sql) in cases {
            let tokens = Tokenizer::new(d, sql).tokenize().unwrap();
            let significant = tokens
                .iter()
                .filter(|t| !matches!(t, Token::Whitespace(_)))
                .count();
            let (all, sig) = token_floor(sql.as_bytes(), d);
            assert!(
                all <= tokens.len() && sig <= significant,
                "{sql:?}: floor {all}/{sig}, tokens {}/{significant}",
                tokens.len()
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn the_token_floor_is_near_on_any_mix_of_sql_pieces(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "select", " ", "\n", "\t", "a", "é", "1", "1.5e3", ".5", "'s'", "'it''s'", "\"q\"",
                "`b`", "[c]", "$$x;y$$", "$t$z$t$", "--c\n", "/*c*/", "#", "@", "$1", "::", "->>", "<=",
                "(", ")", ",", "+", "-", "*", "/", "%", "||", "x'ff'", "e'\\''", "\\", "=", "!", "~",
            ]), 0..40),
        ) {
            // Pieces glued with no blank between make names no one writes
            // (`$1$$x` is one placeholder): each stands apart.
            let sql = pieces.join(" ");
            // The generic tokenizer's names run on through `#`, `@`, `$` and
            // quotes in ways no engine reads; the engines' dialects are kept.
            let dialects: [&dyn Dialect; 2] = [&PostgreSqlDialect {}, &MySqlDialect {}];
            for d in dialects {
                let Ok(tokens) = Tokenizer::new(d, &sql).tokenize() else {
                    continue;
                };
                let significant = tokens
                    .iter()
                    .filter(|t| !matches!(t, Token::Whitespace(_)))
                    .count();
                let (all, sig) = token_floor(sql.as_bytes(), d);
                // Dialects' quirks (the generic one reads `$t$x$t$` as a
                // name) keep the floor from being exact on every string; it
                // is never off by more than twice.
                proptest::prop_assert!(
                    all <= 2 * tokens.len() + 2 && sig <= 2 * significant + 2,
                    "{:?}: floor {}/{}, tokens {}/{}", sql, all, sig, tokens.len(), significant
                );
            }
        }
    }

    #[test]
    fn ranges_are_linear_on_hostile_input() {
        let sql = "'\"`[/*$a$".repeat(20_000);
        let ranges = statement_ranges(&sql, &MySqlDialect {});
        assert_eq!(ranges.len(), 1);
    }

    #[test]
    fn a_cut_through_an_unknown_comment_style_is_redone_exactly() {
        // Snowflake's `//` comments are unknown to the scanner.
        let sql = "select 1 from a // not; a cut\n;\nselect 2 from b";
        let chunks: Vec<_> = split_statements(sql, &SnowflakeDialect {}).collect();
        assert_eq!(chunks.len(), 2);
        assert!(chunks.iter().all(|c| c.tokens.is_ok()));
        assert_eq!(chunks[1].start, Location { line: 3, column: 1 });
    }

    #[test]
    fn hash_comments_are_comments_where_the_dialect_says_so() {
        let sql = "select 1 # drop; insert into x select 2\n;select 3";
        assert_eq!(
            starts(sql, &MySqlDialect {}),
            vec![(1, 1, true), (2, 2, true)]
        );
    }

    #[test]
    fn escape_strings_cut_wrongly_are_redone_exactly() {
        let sql = "select E'it\\'s; fine' from a;\nselect 2";
        assert_eq!(
            starts(sql, &PostgreSqlDialect {}),
            vec![(1, 1, true), (2, 1, true)]
        );
    }

    #[test]
    fn a_cut_too_few_is_recut_at_semicolon_tokens() {
        // The scanner takes `$$` for a quote; MySQL does not.
        let sql = "select $$a from t; select 2 from u; select 3$$ from v";
        let n = split_statements(sql, &MySqlDialect {}).count();
        assert_eq!(n, 3);
    }

    #[test]
    fn blanks_fold_into_one_token_that_keeps_its_newline() {
        let sql = "select  a,\n    b -- note\n\t\n  from t";
        let chunks: Vec<_> = split_statements(sql, &GenericDialect {}).collect();
        let tokens = chunks[0].tokens.as_ref().unwrap();
        let shapes: Vec<String> = tokens
            .iter()
            .map(|t| match &t.token {
                Token::Whitespace(Whitespace::Space) => "_".into(),
                Token::Whitespace(Whitespace::Newline) => "NL".into(),
                Token::Whitespace(Whitespace::SingleLineComment { .. }) => "--".into(),
                other => other.to_string(),
            })
            .collect();
        assert_eq!(
            shapes,
            [
                "select", "_", "a", ",", "NL", "b", "_", "--", "NL", "from", "_", "t"
            ]
        );
        // The folded run spans from its first blank to its last.
        assert_eq!(
            tokens[4].span.start,
            Location {
                line: 1,
                column: 11
            }
        );
        assert_eq!(tokens[4].span.end, Location { line: 2, column: 5 });
        // Locations of what is left are the script's own.
        assert_eq!(tokens[9].span.start, Location { line: 4, column: 3 });
    }

    #[test]
    fn empty_and_comment_only_scripts_have_no_statements() {
        assert_eq!(split_statements("", &GenericDialect {}).count(), 0);
        assert_eq!(
            split_statements(" ;; -- x\n/* y */ ;", &GenericDialect {}).count(),
            0
        );
    }
}
