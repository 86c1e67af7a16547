//! Lineage of a whole script: every statement's reads and writes, and what
//! the script as a job reads, writes and keeps to itself.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use sqlparser::ast::Spanned;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Location, Token, TokenWithSpan};

use super::canonical::canonical_text;
use super::columns::{ColumnLineage, KnownColumns, column_lineage_with};
use super::dialect::SqlDialect;
use super::extract::{StatementKind, TableLineage, statement_lineage};
use super::recover::{Recovered, names_no_table, recover};
use super::session::Session;
use super::split::{Chunk, join_blocks, split_statements};
use crate::cache::{Cache, KeyBuilder, Table};

/// The table lineage of a SQL script.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScriptLineage {
    /// Tables the script reads that it has not written earlier.
    pub sources: Vec<String>,
    /// Tables the script writes for others: written, and not only read back
    /// by a later statement of the script.
    pub targets: Vec<String>,
    /// Tables the script writes and then reads itself (staging steps).
    pub intermediates: Vec<String>,
    /// Each statement that parsed, in script order.
    pub statements: Vec<StatementLineage>,
    /// Each statement that did not parse.
    pub errors: Vec<StatementError>,
    /// The statements among `errors` that name no table ripple follows
    /// (`CREATE USER`, `GRANT`, a file format): their failure loses no lineage.
    #[serde(skip)]
    pub tableless: BTreeSet<usize>,
}

impl ScriptLineage {
    /// The statements defining a routine, with its name.
    pub fn defined_routines(&self) -> impl Iterator<Item = (&StatementLineage, &str)> {
        self.statements
            .iter()
            .filter_map(|s| s.defines.as_deref().map(|r| (s, r)))
    }

    /// The statements running a routine whose tables are elsewhere, with
    /// the routine (see [`StatementLineage::runs`]).
    pub fn hidden_routines(&self) -> impl Iterator<Item = (&StatementLineage, &str)> {
        self.statements
            .iter()
            .filter_map(|s| s.runs.as_deref().map(|r| (s, r)))
    }

    /// The targets some statement puts rows in: a table the script only
    /// creates empty (`CREATE TABLE t (cols)`, DDL run before another job
    /// loads it) is not produced by the script.
    pub fn filled_targets(&self) -> Vec<String> {
        self.targets
            .iter()
            .filter(|t| {
                self.statements
                    .iter()
                    .any(|s| s.kind != StatementKind::CreateTable && s.targets.contains(t))
            })
            .cloned()
            .collect()
    }

    /// For each of the script's targets, the script sources its rows come
    /// from: a statement's reads feed what it writes, a table the script
    /// wrote earlier passes on what fed it (and its own earlier rows, unless
    /// the script replaced it whole). Two unrelated statements in one file
    /// (`create table a as select * from x; create table b as select * from
    /// y`) then give `x → a` and `y → b`, not every read to every write.
    ///
    /// A table the script writes for others and reads back feeds what it
    /// reads it into too (`insert into daily ...; create view v as select
    /// ... from daily`: `daily → v`): whoever changes `daily` changes `v`,
    /// and a plan restating both must rebuild `daily` first. Such a feed
    /// that would close a loop among the script's targets is left out.
    pub fn feeds(&self) -> BTreeMap<String, BTreeSet<String>> {
        let published: BTreeSet<&str> = self.targets.iter().map(String::as_str).collect();
        let mut fed: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        let mut replaced: BTreeSet<&str> = BTreeSet::new();
        // Target to the targets it reads back (in statement order).
        let mut internal: Vec<(&str, &str)> = Vec::new();
        for stmt in &self.statements {
            let mut ins: BTreeSet<&str> = BTreeSet::new();
            let mut back: Vec<&str> = Vec::new();
            for r in &stmt.sources {
                match fed.get(r.as_str()) {
                    Some(f) => {
                        ins.extend(f.iter().copied());
                        if !replaced.contains(r.as_str()) {
                            ins.insert(r);
                        }
                        if published.contains(r.as_str()) {
                            back.push(r);
                        }
                    }
                    None => {
                        ins.insert(r);
                    }
                }
            }
            for t in &stmt.targets {
                internal.extend(
                    back.iter()
                        .filter(|r| **r != t.as_str())
                        .map(|r| (*r, t.as_str())),
                );
            }
            replaced.extend(stmt.replaced.iter().map(String::as_str));
            replaced.extend(stmt.dropped.iter().map(String::as_str));
            for t in &stmt.targets {
                let whole = stmt.replaced.iter().any(|x| x == t);
                let entry = fed.entry(t.as_str()).or_default();
                if whole {
                    *entry = ins.clone();
                } else {
                    entry.extend(ins.iter().copied());
                }
            }
        }
        let sources: BTreeSet<&str> = self.sources.iter().map(String::as_str).collect();
        let mut out: BTreeMap<String, BTreeSet<String>> = self
            .targets
            .iter()
            .map(|t| {
                let from = fed
                    .get(t.as_str())
                    .into_iter()
                    .flatten()
                    .filter(|s| sources.contains(*s))
                    .map(|s| s.to_string())
                    .collect();
                (t.clone(), from)
            })
            .collect();
        for (from, to) in internal {
            if !reaches(&out, to, from)
                && let Some(feeds) = out.get_mut(to)
            {
                feeds.insert(from.to_string());
            }
        }
        out
    }

    /// What the script reads as a job: its sources, and the tables it
    /// writes for others and reads back, given its [`ScriptLineage::feeds`].
    pub fn job_reads(&self, feeds: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
        let read_back: BTreeSet<&String> = feeds
            .values()
            .flatten()
            .filter(|r| self.targets.contains(r) && !self.sources.contains(r))
            .collect();
        let mut out = self.sources.clone();
        out.extend(read_back.into_iter().cloned());
        out
    }
}

/// Whether `from` feeds `to`, directly or through other feeds.
fn reaches(feeds: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> bool {
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut stack = vec![to];
    while let Some(n) = stack.pop() {
        if n == from {
            return true;
        }
        if seen.insert(n) {
            stack.extend(feeds.get(n).into_iter().flatten().map(String::as_str));
        }
    }
    false
}

/// A [`ScriptLineage`] with the fields its JSON output leaves out
/// (canonical text, fingerprints, replaced targets, which errors name no
/// table): the form the warm cache keeps, read back equal to what was
/// written.
#[derive(Debug, Serialize, Deserialize)]
pub struct WholeLineage {
    lineage: ScriptLineage,
    tableless: BTreeSet<usize>,
    hidden: Vec<HiddenFields>,
}

/// One statement's fields that [`StatementLineage`]'s JSON leaves out.
#[derive(Debug, Serialize, Deserialize)]
struct HiddenFields {
    canonical: Option<String>,
    replaced: Vec<String>,
    fingerprints: Vec<String>,
    row_fingerprints: BTreeSet<String>,
}

impl From<ScriptLineage> for WholeLineage {
    fn from(mut l: ScriptLineage) -> Self {
        let hidden = l
            .statements
            .iter_mut()
            .map(|s| {
                let columns = s.columns.as_mut();
                HiddenFields {
                    canonical: s.canonical.take(),
                    replaced: std::mem::take(&mut s.replaced),
                    fingerprints: columns
                        .iter()
                        .flat_map(|c| c.columns.iter().map(|o| o.fingerprint.clone()))
                        .collect(),
                    row_fingerprints: columns
                        .map(|c| std::mem::take(&mut c.row_fingerprints))
                        .unwrap_or_default(),
                }
            })
            .collect();
        WholeLineage {
            tableless: std::mem::take(&mut l.tableless),
            lineage: l,
            hidden,
        }
    }
}

impl WholeLineage {
    /// The lineage as it was, every field restored.
    pub fn into_lineage(self) -> ScriptLineage {
        let mut l = self.lineage;
        l.tableless = self.tableless;
        for (s, h) in l.statements.iter_mut().zip(self.hidden) {
            s.canonical = h.canonical;
            s.replaced = h.replaced;
            if let Some(c) = &mut s.columns {
                c.row_fingerprints = h.row_fingerprints;
                for (o, f) in c.columns.iter_mut().zip(h.fingerprints) {
                    o.fingerprint = f;
                }
            }
        }
        l
    }
}

/// The lineage of one statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatementLineage {
    /// 1-based position of the statement in the script; failed statements
    /// keep their numbers, so these can have gaps.
    pub index: usize,
    /// 1-based line where the statement starts.
    pub line: u64,
    /// 1-based column where the statement starts.
    pub column: u64,
    /// What the statement does.
    pub kind: StatementKind,
    /// Tables it reads, sorted.
    pub sources: Vec<String>,
    /// Tables it writes, sorted.
    pub targets: Vec<String>,
    /// Those of `targets` that are temporary tables, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub temporary: Vec<String>,
    /// Tables and views it drops, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<String>,
    /// Column lineage, when asked for ([`script_lineage_with_columns`]) and
    /// the statement produces rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub columns: Option<ColumnLineage>,
    /// The routine it runs, whose tables it cannot show (`CALL p()`,
    /// `EXECUTE p`, `EXECUTE IMMEDIATE`).
    #[serde(skip)]
    pub runs: Option<String>,
    /// The routine it defines (`CREATE FUNCTION`, `CREATE MACRO`, `CREATE
    /// PROCEDURE`): what its calls read is not followed.
    #[serde(skip)]
    pub defines: Option<String>,
    /// The statement's canonical text ([`super::canonical_text`]), when
    /// asked for ([`script_semantics`]).
    #[serde(skip)]
    pub canonical: Option<String>,
    /// The targets whose whole contents it replaces (see
    /// `roll_up`: a table only appended to is still read as it was).
    #[serde(skip)]
    pub replaced: Vec<String>,
}

/// A statement that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatementError {
    /// 1-based position of the statement in the script.
    pub statement: usize,
    /// 1-based line of the error.
    pub line: u64,
    /// 1-based column of the error.
    pub column: u64,
    /// The parser's reason.
    pub message: String,
}

/// The table lineage of `sql`, read as `dialect`.
///
/// Never fails: statements that do not parse are listed in
/// [`ScriptLineage::errors`] and every other statement is still analysed.
pub fn script_lineage(sql: &str, dialect: SqlDialect) -> ScriptLineage {
    analyse_script(sql, dialect, None, false, false)
}

/// [`script_lineage`] with each statement's column lineage, `known` giving
/// the columns of upstream relations so `*` can be expanded; a table the
/// script itself creates from a query is known to the statements after it.
pub fn script_lineage_with_columns(
    sql: &str,
    dialect: SqlDialect,
    known: &KnownColumns,
) -> ScriptLineage {
    analyse_script(sql, dialect, Some(known), false, true)
}

/// [`script_lineage_with_columns`] without the expression fingerprints
/// (no [`super::OutputColumn::fingerprint`]): which column comes from
/// which, for exports, at a fraction of the cost.
pub fn script_column_edges(sql: &str, dialect: SqlDialect, known: &KnownColumns) -> ScriptLineage {
    analyse_script(sql, dialect, Some(known), false, false)
}

/// [`script_lineage_with_columns`] with each statement's canonical text:
/// what two versions of a script are compared by.
pub fn script_semantics(sql: &str, dialect: SqlDialect, known: &KnownColumns) -> ScriptLineage {
    analyse_script(sql, dialect, Some(known), true, true)
}

/// How [`read_cached`] reads a script: which of the functions above.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptReading {
    /// [`script_column_edges`].
    ColumnEdges,
    /// [`script_lineage_with_columns`].
    WithColumns,
    /// [`script_semantics`].
    Semantics,
}

/// The script read as `reading` asks, through the warm cache: the answer
/// depends on the text, the dialect, the reading and the known columns,
/// and on nothing else, so those are its key.
pub fn read_cached(
    cache: &Cache,
    sql: &str,
    dialect: SqlDialect,
    known: &KnownColumns,
    reading: ScriptReading,
) -> ScriptLineage {
    let read = || match reading {
        ScriptReading::ColumnEdges => script_column_edges(sql, dialect, known),
        ScriptReading::WithColumns => script_lineage_with_columns(sql, dialect, known),
        ScriptReading::Semantics => script_semantics(sql, dialect, known),
    };
    let key = || {
        KeyBuilder::default()
            .str(sql)
            .str(dialect.name())
            .u64(reading as u64)
            .json(known)
            .finish()
    };
    cache
        .remember(Table::Columns, key, || WholeLineage::from(read()))
        .into_lineage()
}

/// What every statement of one script is read with.
struct Reading<'a> {
    dialect: SqlDialect,
    parser_dialect: &'a dyn sqlparser::dialect::Dialect,
    /// Known columns, grown as the script creates tables; `None` when no
    /// column lineage is wanted.
    known: Option<RefCell<KnownColumns>>,
    /// Whether each statement's canonical text is wanted.
    canonical: bool,
    /// Whether output columns carry fingerprints.
    fingerprints: bool,
    /// Where unqualified names point, as `USE` statements go by.
    session: RefCell<Session>,
    /// The lineage of each statement the script prepared (`PREPARE p AS
    /// ...`), by its name lowercased.
    prepared: RefCell<BTreeMap<String, (StatementKind, TableLineage)>>,
}

fn analyse_script(
    sql: &str,
    dialect: SqlDialect,
    known: Option<&KnownColumns>,
    canonical: bool,
    fingerprints: bool,
) -> ScriptLineage {
    let known = known.map(|k| RefCell::new(k.clone()));
    let parser_dialect = dialect.parser_dialect();
    let reading = Reading {
        dialect,
        parser_dialect: parser_dialect.as_ref(),
        known,
        canonical,
        fingerprints,
        session: RefCell::new(Session::default()),
        prepared: RefCell::default(),
    };
    let mut statements = Vec::new();
    let mut errors = Vec::new();
    let mut tableless = BTreeSet::new();
    let mut index = 0;
    for Chunk {
        start,
        significant,
        tokens,
    } in join_blocks(split_statements(sql, parser_dialect.as_ref()))
    {
        let tokens = match tokens {
            Ok(tokens) => tokens,
            Err(e) => {
                index += 1;
                errors.push(StatementError {
                    statement: index,
                    line: e.location.line,
                    column: e.location.column,
                    message: e.message,
                });
                continue;
            }
        };
        if let Some(message) = too_large(significant, &tokens) {
            index += 1;
            errors.push(StatementError {
                statement: index,
                line: start.line,
                column: start.column,
                message,
            });
            continue;
        }
        // The AST of a long operator chain is as deep as the chain, and both
        // sqlparser's visitor and drop glue recurse over it: run each
        // statement on a stack sized to its token count (a no-op for the
        // usual statement, which fits in what is left of this one), if it
        // can be had.
        let ran = on_statement_stack(significant, || {
            analyse_chunk(
                tokens,
                start,
                &reading,
                &mut index,
                &mut statements,
                (&mut errors, &mut tableless),
            )
        });
        if let Err(message) = ran {
            index += 1;
            errors.push(StatementError {
                statement: index,
                line: start.line,
                column: start.column,
                message,
            });
        }
    }
    let (sources, targets, intermediates) = roll_up(&statements);
    ScriptLineage {
        sources,
        targets,
        intermediates,
        statements,
        errors,
        tableless,
    }
}

pub(crate) use super::split::MAX_STATEMENT_TOKENS;
/// Set operations (`union`, `intersect`, `except`, `minus`) one statement
/// may hold: each branch is a `SELECT` of its own in sqlparser's tree, about
/// 12 KB of it however short the branch's text, and 17 KB with what reading
/// it takes (80,000 `union all` branches in a 2.8 MB statement took 1.4 GB;
/// 90,000, 3.1 GB). Past it the statement is reported, not analysed.
pub(crate) const MAX_SET_OPERATIONS: usize = 10_000;
/// Memory one token of a statement may take to read, at most, beside its
/// stack: its share of sqlparser's tree and of the column lineage read from
/// it (measured at 0.5 to 1.5 KiB for chains of `+`, joins, select lists and
/// `in` lists; a `union` branch's 12 KB is bounded by
/// [`MAX_SET_OPERATIONS`]). Under an address-space limit a statement whose
/// stack and memory cannot both fit is reported instead of read (an
/// allocation that fails aborts the process).
const HEAP_PER_TOKEN: usize = 2048;
/// Memory below which no statement checks what the address space has left
/// (reading the process's size costs as much as reading a short statement).
const HEAP_CHECKED: usize = 32 << 20;

/// Why a statement of `significant` tokens (`tokens`, white space
/// included) is too large to read, if it is: more tokens than
/// [`MAX_STATEMENT_TOKENS`], or more set operations than
/// [`MAX_SET_OPERATIONS`].
pub(crate) fn too_large(significant: usize, tokens: &[TokenWithSpan]) -> Option<String> {
    use sqlparser::keywords::Keyword;
    if significant > MAX_STATEMENT_TOKENS {
        return Some(format!(
            "statement too large to analyse ({significant} tokens; the limit is {MAX_STATEMENT_TOKENS}); split it"
        ));
    }
    // An operation takes a token and a branch at least two more.
    if significant <= MAX_SET_OPERATIONS {
        return None;
    }
    let operations = tokens
        .iter()
        .filter(|t| {
            matches!(
                &t.token,
                Token::Word(w) if w.quote_style.is_none()
                    && matches!(w.keyword, Keyword::UNION | Keyword::INTERSECT | Keyword::EXCEPT | Keyword::MINUS)
            )
        })
        .count();
    (operations > MAX_SET_OPERATIONS).then(|| {
        format!(
            "statement too large to analyse ({operations} set operations: `union`, `intersect`, `except`; the limit is {MAX_SET_OPERATIONS}, each branch taking about 17 KB to read); split it, e.g. insert the branches in batches of a few thousand"
        )
    })
}

/// Runs `f`, which parses and reads statements of `significant` tokens, on
/// a stack sized for them (sqlparser's trees of long chains are as deep as
/// the chain, and reading and dropping them recurse): the thread's own when
/// it has that much left, else one mapped for it. Under an address-space
/// limit (`ulimit -v`) the stack is mapped, and a statement is read, only
/// if the stack and the memory the statement may take both fit; otherwise
/// the error says what it needed and what to do (a stack that cannot be
/// mapped once made stacker panic, and an allocation that fails aborts).
pub(crate) fn on_statement_stack<R>(
    significant: usize,
    f: impl FnOnce() -> R,
) -> Result<R, String> {
    let stack = STACK_BASE.saturating_add(significant.saturating_mul(STACK_PER_TOKEN));
    let heap = significant.saturating_mul(HEAP_PER_TOKEN);
    let heap = if heap >= HEAP_CHECKED { heap } else { 0 };
    crate::stack::grow_reserving(stack, heap as u64, f).map_err(|_| {
        format!(
            "statement too large to read under this address-space limit (`ulimit -v`): its {significant} tokens need a stack of {} MiB and up to {} MiB of memory; raise the limit or split the statement",
            stack >> 20,
            (significant.saturating_mul(HEAP_PER_TOKEN)) >> 20
        )
    })
}
/// Stack for a statement of no tokens.
pub(crate) const STACK_BASE: usize = 256 * 1024;
/// Stack per token. The deepest shape is `1+1+...`, one tree level per two
/// tokens; column lineage clones such an expression (to print its
/// fingerprint), whose recursion is the costliest per level: 2,048 bytes a
/// token overflowed a debug build at 100,000 terms, so debug has 8 KiB and
/// release, whose frames are several times smaller, 2 KiB. (512 bytes was
/// measured to be just enough: 1,026 bytes a level of `1 + 1 + ...`, two
/// tokens; a change elsewhere that made the clone's frame a few bytes
/// larger overflowed it. Only the pages a statement uses are touched.)
pub(crate) const STACK_PER_TOKEN: usize = if cfg!(debug_assertions) { 8192 } else { 2048 };

/// Parses one chunk and appends its statements or its error.
fn analyse_chunk(
    tokens: Vec<TokenWithSpan>,
    start: Location,
    reading: &Reading,
    index: &mut usize,
    statements: &mut Vec<StatementLineage>,
    (errors, tableless): (&mut Vec<StatementError>, &mut BTreeSet<usize>),
) {
    let end = last_location(&tokens).unwrap_or(start);
    // T-SQL chunks can hold several statements; sqlparser's span of one
    // starts at its name (`CREATE TABLE b` at `b`): the statement starts
    // at the verb before it.
    let starts: Vec<Location> = match reading.dialect {
        SqlDialect::MsSql => tokens
            .iter()
            .filter(|t| matches!(&t.token, Token::Word(w) if STATEMENT_VERBS.contains(&w.keyword)))
            .map(|t| t.span.start)
            .collect(),
        _ => Vec::new(),
    };
    if nested_past_limit(&tokens) {
        *index += 1;
        errors.push(parse_error(
            *index,
            ParserError::RecursionLimitExceeded,
            start,
            end,
        ));
        return;
    }
    let mut parser = new_parser(reading).with_tokens_with_locations(tokens);
    let error = match parse_all(&mut parser) {
        Ok(parsed) => return push_parsed(&parsed, (start, &starts), reading, index, statements),
        Err(e) => e,
    };
    let tokens = parser.into_tokens();
    let no_table = names_no_table(&tokens);
    match recover(&tokens, reading.dialect) {
        Some(Recovered::Tokens(tokens)) => {
            let mut parser = new_parser(reading).with_tokens_with_locations(tokens);
            if let Ok(parsed) = parse_all(&mut parser) {
                return push_parsed(&parsed, (start, &starts), reading, index, statements);
            }
        }
        Some(Recovered::Body(body)) => {
            // The body read as a script: what calling the procedure does.
            let inner = script_lineage(&body, reading.dialect);
            if inner.errors.is_empty() {
                let mut lineage = TableLineage {
                    sources: inner.sources.into_iter().collect(),
                    targets: inner.targets.into_iter().collect(),
                    ..TableLineage::default()
                };
                for s in &inner.statements {
                    lineage.temporary.extend(s.temporary.iter().cloned());
                    lineage.dropped.extend(s.dropped.iter().cloned());
                }
                *index += 1;
                reading
                    .session
                    .borrow_mut()
                    .qualify_all(&mut lineage, reading.dialect);
                statements.push(StatementLineage::new(
                    *index,
                    start,
                    StatementKind::Other,
                    lineage,
                ));
                return;
            }
        }
        Some(Recovered::Lineage(kind, mut lineage)) => {
            *index += 1;
            reading
                .session
                .borrow_mut()
                .qualify_all(&mut lineage, reading.dialect);
            statements.push(StatementLineage::new(*index, start, kind, lineage));
            return;
        }
        None => {}
    }
    *index += 1;
    if no_table {
        tableless.insert(*index);
    }
    errors.push(parse_error(*index, error, start, end));
}

/// Levels of nesting a statement may have (sqlparser's own limit is 50).
const PARSE_DEPTH: usize = 250;

/// A parser that reads statements nested up to [`PARSE_DEPTH`] levels.
pub(crate) fn deep_parser(dialect: &dyn sqlparser::dialect::Dialect) -> Parser<'_> {
    // sqlparser stops at 50 levels: 60 nested CASEs or NOTs are real
    // generated SQL. A statement's stack is sized by its tokens (see
    // `STACK_PER_TOKEN`), and a level takes at least one token.
    // The parser counts a `CASE` or a subquery as more than one level: its
    // own limit is past what `nested_past_limit` lets through.
    Parser::new(dialect).with_recursion_limit(4 * PARSE_DEPTH + 64)
}

/// Whether brackets, `CASE`s or a run of `NOT`s or signs nest deeper than
/// [`PARSE_DEPTH`]: past it sqlparser reports some of them as a token it
/// did not expect (`found: not`), not as depth.
fn nested_past_limit(tokens: &[TokenWithSpan]) -> bool {
    use sqlparser::keywords::Keyword;
    let (mut brackets, mut cases, mut nots) = (0usize, 0usize, 0usize);
    for t in tokens {
        match &t.token {
            Token::Whitespace(_) => continue,
            Token::LParen => brackets += 1,
            Token::RParen => brackets = brackets.saturating_sub(1),
            Token::Word(w) if w.keyword == Keyword::CASE => cases += 1,
            Token::Word(w) if w.keyword == Keyword::END => cases = cases.saturating_sub(1),
            _ => {}
        }
        // A run of prefix operators nests one level a token.
        nots = match &t.token {
            Token::Word(w) if w.keyword == Keyword::NOT => nots + 1,
            Token::Minus | Token::Plus | Token::Tilde | Token::ExclamationMark => nots + 1,
            _ => 0,
        };
        if brackets.max(cases).max(nots) > PARSE_DEPTH {
            return true;
        }
    }
    false
}

/// A parser for one chunk of `reading`'s dialect.
fn new_parser<'a>(reading: &Reading<'a>) -> Parser<'a> {
    let parser = deep_parser(reading.parser_dialect);
    if reading.dialect != SqlDialect::MsSql {
        return parser;
    }
    // T-SQL needs no `;` between statements.
    let options = sqlparser::parser::ParserOptions {
        require_semicolon_stmt_delimiter: false,
        ..sqlparser::parser::ParserOptions::new()
            .with_trailing_commas(reading.parser_dialect.supports_trailing_commas())
    };
    parser.with_options(options)
}

/// Every statement of the parser's chunk.
fn parse_all(parser: &mut Parser) -> Result<Vec<sqlparser::ast::Statement>, ParserError> {
    let parsed = parser.parse_statements()?;
    // parse_statements stops quietly at a stray `END`; what follows
    // would be lost without a word, so it is an error here.
    let next = parser.peek_token();
    match next.token {
        Token::EOF => Ok(parsed),
        _ => Err(ParserError::ParserError(format!(
            "Expected: end of statement, found: {}{}",
            next.token, next.span.start
        ))),
    }
}

/// Keywords a T-SQL statement starts with.
const STATEMENT_VERBS: &[sqlparser::keywords::Keyword] = {
    use sqlparser::keywords::Keyword::*;
    &[
        CREATE, INSERT, SELECT, UPDATE, DELETE, MERGE, WITH, DROP, ALTER, TRUNCATE, EXEC, EXECUTE,
        DECLARE, SET, USE, BEGIN, COMMIT, ROLLBACK, GRANT, REVOKE, IF, WHILE, RETURN, PRINT, COPY,
    ]
};

/// Appends the lineage of a chunk's parsed statements.
fn push_parsed(
    parsed: &[sqlparser::ast::Statement],
    (start, starts): (Location, &[Location]),
    reading: &Reading,
    index: &mut usize,
    statements: &mut Vec<StatementLineage>,
) {
    for (n, stmt) in parsed.iter().enumerate() {
        *index += 1;
        reading.session.borrow_mut().follow(stmt, reading.dialect);
        let (kind, mut lineage) = prepared_lineage(stmt, reading)
            .unwrap_or_else(|| statement_lineage(stmt, reading.dialect));
        reading
            .session
            .borrow_mut()
            .qualify_all(&mut lineage, reading.dialect);
        // Dialects that need no `;` can put several statements in
        // one chunk; the later ones start where their span says.
        let at = match n {
            0 => start,
            _ => {
                let named = stmt.span().start;
                let key = |l: &Location| (l.line, l.column);
                starts
                    .iter()
                    .rev()
                    .find(|l| named.line > 0 && key(l) <= key(&named))
                    .copied()
                    .or(Some(named).filter(|l| l.line > 0))
                    .unwrap_or(start)
            }
        };
        let mut lineage = StatementLineage::new(*index, at, kind, lineage);
        lineage.defines = defined_routine(stmt);
        lineage.runs = hidden_routine(stmt)
            .filter(|r| !reading.prepared.borrow().contains_key(&r.to_lowercase()));
        if let Some(known) = &reading.known {
            // Names as written (`daily` after `set search_path to mart`)
            // find the columns known under the session's qualified name.
            let seen = reading.session.borrow().as_written(&known.borrow());
            let columns = column_lineage_with(
                stmt,
                reading.dialect,
                seen.as_ref().unwrap_or(&known.borrow()),
                reading.fingerprints,
            );
            learn_columns(
                &mut known.borrow_mut(),
                stmt,
                &lineage.targets,
                columns.as_ref(),
                reading.dialect,
            );
            lineage.columns = columns;
        }
        if reading.canonical {
            lineage.canonical = Some(canonical_text(stmt, reading.dialect));
        }
        statements.push(lineage);
    }
}

/// Records the columns of a table a statement creates whole (`CREATE TABLE`
/// with column definitions, `CREATE TABLE AS`, `CREATE VIEW`), unless a `*`
/// in its output left them unknown.
fn learn_columns(
    known: &mut KnownColumns,
    stmt: &sqlparser::ast::Statement,
    targets: &[String],
    c: Option<&ColumnLineage>,
    dialect: SqlDialect,
) {
    use sqlparser::ast::Statement;
    // A table made with column definitions: its columns, whatever a later
    // insert's SELECT calls its values.
    if let Statement::CreateTable(ct) = stmt
        && ct.query.is_none()
        && !ct.columns.is_empty()
    {
        let names: Vec<String> = ct
            .columns
            .iter()
            .map(|c| super::names::ident_name(&c.name, dialect))
            .collect();
        for t in targets {
            known.insert(t.clone(), names.clone());
        }
        return;
    }
    let Some(c) = c else { return };
    let creates = matches!(stmt, Statement::CreateTable(_) | Statement::CreateView(_));
    if !creates || c.columns.iter().any(|o| o.name == "*") {
        return;
    }
    let names = super::columns::unique_names(&c.columns);
    for t in targets {
        known.insert(t.clone(), names.clone());
    }
}

impl StatementLineage {
    fn new(index: usize, start: Location, kind: StatementKind, lineage: TableLineage) -> Self {
        StatementLineage {
            index,
            line: start.line,
            column: start.column,
            kind,
            sources: lineage.sources.into_iter().collect(),
            targets: lineage.targets.into_iter().collect(),
            temporary: lineage.temporary.into_iter().collect(),
            dropped: lineage.dropped.into_iter().collect(),
            replaced: lineage.replaced.into_iter().collect(),
            columns: None,
            canonical: None,
            runs: None,
            defines: None,
        }
    }
}

/// The routine a statement defines, if any (see
/// [`StatementLineage::defines`]).
fn defined_routine(stmt: &sqlparser::ast::Statement) -> Option<String> {
    use sqlparser::ast::Statement;
    match stmt {
        Statement::CreateFunction(f) => Some(f.name.to_string()),
        Statement::CreateMacro { name, .. } | Statement::CreateProcedure { name, .. } => {
            Some(name.to_string())
        }
        _ => None,
    }
}

/// `PREPARE p AS ...` keeps its statement's lineage for `EXECUTE p`,
/// where it runs (a delete between them comes first); the PREPARE itself
/// touches nothing. `None` for any other statement.
fn prepared_lineage(
    stmt: &sqlparser::ast::Statement,
    reading: &Reading,
) -> Option<(StatementKind, TableLineage)> {
    use sqlparser::ast::Statement;
    match stmt {
        Statement::Prepare {
            name, statement, ..
        } => {
            let inner = statement_lineage(statement, reading.dialect);
            reading
                .prepared
                .borrow_mut()
                .insert(name.value.to_lowercase(), inner);
            Some((StatementKind::Other, TableLineage::default()))
        }
        Statement::Execute {
            name: Some(name),
            immediate: false,
            ..
        } => reading
            .prepared
            .borrow()
            .get(&name.to_string().to_lowercase())
            .cloned(),
        _ => None,
    }
}

/// The routine a statement runs whose reads and writes are elsewhere (a
/// procedure, a prepared statement, a string of SQL).
fn hidden_routine(stmt: &sqlparser::ast::Statement) -> Option<String> {
    use sqlparser::ast::Statement;
    match stmt {
        Statement::Call(f) => Some(f.name.to_string()),
        Statement::Execute {
            name, immediate, ..
        } => Some(match (name, immediate) {
            // Dialects without `EXECUTE IMMEDIATE` read `immediate` as the
            // name.
            (Some(n), false) if !n.to_string().eq_ignore_ascii_case("immediate") => n.to_string(),
            _ => "EXECUTE IMMEDIATE".to_string(),
        }),
        _ => None,
    }
}

/// Script-level sources, targets and intermediates, as DESIGN.md defines
/// them. A source is read before the script writes it. An intermediate is
/// written and then read by a later statement. A target is written and not
/// *only* intermediate: a table read back later is still a target unless it
/// is also scratch, i.e. temporary or dropped after its last write. A table
/// the script only appended to (`INSERT INTO`, `MERGE`, `UPDATE`) before
/// reading it is read with its earlier rows: a source as well.
fn roll_up(statements: &[StatementLineage]) -> (Vec<String>, Vec<String>, Vec<String>) {
    let mut sources = BTreeSet::new();
    let mut last_write: BTreeMap<&str, usize> = BTreeMap::new();
    let mut replaced: BTreeSet<&str> = BTreeSet::new();
    let mut read_back: BTreeSet<&str> = BTreeSet::new();
    let mut temporary: BTreeSet<&str> = BTreeSet::new();
    let mut dropped: BTreeSet<&str> = BTreeSet::new();
    for (i, stmt) in statements.iter().enumerate() {
        for s in &stmt.sources {
            if last_write.contains_key(s.as_str()) {
                read_back.insert(s);
                if !replaced.contains(s.as_str()) {
                    sources.insert(s.clone());
                }
            } else {
                sources.insert(s.clone());
            }
        }
        replaced.extend(stmt.replaced.iter().map(String::as_str));
        // A table dropped and made again holds only what the script wrote.
        replaced.extend(stmt.dropped.iter().map(String::as_str));
        for t in &stmt.targets {
            last_write.insert(t, i);
            dropped.remove(t.as_str());
        }
        temporary.extend(stmt.temporary.iter().map(String::as_str));
        dropped.extend(
            stmt.dropped
                .iter()
                .map(String::as_str)
                .filter(|d| last_write.contains_key(d)),
        );
    }
    let mut targets = Vec::new();
    let mut intermediates = Vec::new();
    for table in last_write.keys() {
        let scratch = temporary.contains(table) || dropped.contains(table);
        if read_back.contains(table) {
            intermediates.push(table.to_string());
            if !scratch {
                targets.push(table.to_string());
            }
        } else {
            targets.push(table.to_string());
        }
    }
    (sources.into_iter().collect(), targets, intermediates)
}

fn last_location(tokens: &[TokenWithSpan]) -> Option<Location> {
    tokens
        .iter()
        .rev()
        .find(|t| !matches!(t.token, Token::Whitespace(_)))
        .map(|t| t.span.end)
}

/// A parse error with its position taken out of sqlparser's message text
/// (`... at Line: L, Column: C`), the only place the parser reports it.
fn parse_error(index: usize, err: ParserError, start: Location, end: Location) -> StatementError {
    let raw = match err {
        ParserError::TokenizerError(s) | ParserError::ParserError(s) => s,
        ParserError::RecursionLimitExceeded => {
            return StatementError {
                statement: index,
                line: start.line,
                column: start.column,
                message: format!(
                    "statement nested too deeply to analyse: more than {PARSE_DEPTH} levels of brackets, subqueries, CASE, NOT or signs; split it with a CTE or a view"
                ),
            };
        }
    };
    let (message, location) = match raw.rfind(" at Line: ") {
        Some(at) => (&raw[..at], parse_location(&raw[at + 10..])),
        None => (raw.as_str(), None),
    };
    // `found: 'xxxx...'` quotes the token whole, however long.
    let message = crate::text::clipped(message, crate::text::MESSAGE_QUOTE).into_owned();
    // The parser points at "EOF" without a position when the statement ends
    // early; the end of its last token is where the reader should look.
    let location = location.unwrap_or(end);
    StatementError {
        statement: index,
        line: location.line,
        column: location.column,
        message,
    }
}

fn parse_location(s: &str) -> Option<Location> {
    let (line, rest) = s.split_once(", Column: ")?;
    let column: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some(Location {
        line: line.trim().parse().ok()?,
        column: column.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_published_table_read_back_feeds_what_it_is_read_into() {
        let l = script_lineage(
            "delete from d; insert into d select * from raw; create or replace view v as select * from d",
            SqlDialect::Postgres,
        );
        let feeds = l.feeds();
        assert_eq!(
            feeds["v"],
            BTreeSet::from(["d".to_string(), "raw".to_string()])
        );
        assert_eq!(feeds["d"], BTreeSet::from(["raw".to_string()]));
        assert_eq!(l.job_reads(&feeds), ["raw", "d"]);
        // Read back both ways: the second feed would close a loop.
        let l = script_lineage(
            "delete from a; insert into a select * from b; delete from b; insert into b select * from a",
            SqlDialect::Postgres,
        );
        let feeds = l.feeds();
        assert_eq!(feeds["a"], BTreeSet::from(["b".to_string()]));
        assert!(!feeds["b"].contains("a"), "{feeds:?}");
    }

    #[test]
    fn whole_lineage_reads_back_equal() {
        // Canonical text, fingerprints, replaced targets and a tableless
        // error: every field the JSON output leaves out.
        let sql =
            "create table t as select a + 1 as b, count(*) as n from s where a > 2 group by 1;
                   insert overwrite table u select * from t;
                   grant select on t to bob;
                   create user ???;";
        let mut known = KnownColumns::new();
        known.insert("s".into(), vec!["a".into()]);
        let l = script_semantics(sql, SqlDialect::Hive, &known);
        assert!(l.statements.iter().any(|s| s.canonical.is_some()));
        assert!(l.statements.iter().any(|s| !s.replaced.is_empty()));
        let text = serde_json::to_string(&WholeLineage::from(l.clone())).unwrap();
        let back: WholeLineage = serde_json::from_str(&text).unwrap();
        assert_eq!(back.into_lineage(), l);
        let edges = script_column_edges(sql, SqlDialect::Hive, &known);
        let text = serde_json::to_string(&WholeLineage::from(edges.clone())).unwrap();
        let back: WholeLineage = serde_json::from_str(&text).unwrap();
        assert_eq!(back.into_lineage(), edges);
    }

    #[test]
    fn location_is_read_out_of_the_message() {
        let e = ParserError::ParserError(
            "Expected: an expression, found: FROM at Line: 3, Column: 8".into(),
        );
        let start = Location { line: 1, column: 1 };
        let got = parse_error(2, e, start, start);
        assert_eq!((got.statement, got.line, got.column), (2, 3, 8));
        assert_eq!(got.message, "Expected: an expression, found: FROM");
    }

    #[test]
    fn missing_location_points_at_the_statement_end() {
        let e = ParserError::ParserError("Expected: identifier, found: EOF".into());
        let got = parse_error(
            1,
            e,
            Location { line: 1, column: 1 },
            Location { line: 4, column: 9 },
        );
        assert_eq!((got.line, got.column), (4, 9));
    }
}
