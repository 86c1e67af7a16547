//! Table lineage of one parsed statement: which tables it reads and writes.
//!
//! Reads are found by one visitor over the whole statement (sqlparser's
//! `Visitor`), which sees every table reference however deeply it is nested
//! (joins, subqueries in any clause, set operations, CTEs). The visitor keeps
//! a stack of CTE scopes so that a CTE name is never taken for a table, with
//! SQL's visibility rules: a CTE is visible to the CTEs after it and to the
//! query body, and to itself only under `WITH RECURSIVE`. Writes come from the
//! statement's own shape (the INSERT target, the MERGE target, ...); a table
//! reference that *is* the write target is excluded from the reads.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::ops::ControlFlow;

use serde::Serialize;
use sqlparser::ast::{
    AlterTableOperation, CopyIntoSnowflakeKind, CopySource, CopyTarget, CreateTableLikeKind, Expr,
    FromTable, FunctionArg, FunctionArgExpr, ObjectName, ObjectNamePart, ObjectType, Query,
    RenameTableNameKind, Select, SetExpr, Statement, TableFactor, TableObject, TableWithJoins,
    Visit, Visitor, With, visit_relations,
};

use super::dialect::SqlDialect;
use super::names::{
    ident_name, identifier_call, path_name, qualified_like, relation_name, relation_name_of_idents,
};

/// What a statement does, as far as lineage cares. Read back (the warm
/// cache) by the names [`StatementKind::as_str`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StatementKind {
    /// A query that writes nothing.
    Select,
    /// `SELECT ... INTO t` (T-SQL, PostgreSQL).
    SelectInto,
    /// `INSERT INTO`.
    Insert,
    /// `INSERT OVERWRITE` (Hive, Spark).
    InsertOverwrite,
    /// `CREATE TABLE` without a query.
    CreateTable,
    /// `CREATE TABLE ... AS SELECT`, `LIKE`, `CLONE`.
    CreateTableAs,
    /// `CREATE [MATERIALIZED] VIEW`.
    CreateView,
    /// `MERGE INTO`.
    Merge,
    /// `UPDATE`.
    Update,
    /// `DELETE`.
    Delete,
    /// `COPY` / `COPY INTO`.
    Copy,
    /// `DROP ...`: no lineage.
    Drop,
    /// `TRUNCATE`: writes (empties) the table.
    Truncate,
    /// Session and transaction control (`USE`, `SET`, `BEGIN`, `COMMIT`,
    /// `ALTER SESSION`, `SHOW`, `EXPLAIN`): no lineage.
    Session,
    /// Anything else (other DDL, grants, procedural statements): no lineage.
    Other,
}

impl StatementKind {
    /// Whether its column lineage is of whole rows of what it writes: an
    /// UPDATE or DELETE names only the columns it sets (a table made by
    /// `create table as` then `update ... set flag` was once restated as
    /// `flag` alone, every other column NULL in production).
    pub fn makes_whole_rows(self) -> bool {
        !matches!(self, StatementKind::Update | StatementKind::Delete)
    }

    /// The kind as written in JSON and text output (`create_table_as`).
    pub fn as_str(self) -> &'static str {
        use StatementKind::*;
        match self {
            Select => "select",
            SelectInto => "select_into",
            Insert => "insert",
            InsertOverwrite => "insert_overwrite",
            CreateTable => "create_table",
            CreateTableAs => "create_table_as",
            CreateView => "create_view",
            Merge => "merge",
            Update => "update",
            Delete => "delete",
            Copy => "copy",
            Drop => "drop",
            Truncate => "truncate",
            Session => "session",
            Other => "other",
        }
    }
}

impl Serialize for StatementKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// The tables one statement reads and writes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TableLineage {
    /// Tables read.
    pub sources: BTreeSet<String>,
    /// Tables written.
    pub targets: BTreeSet<String>,
    /// The written tables that are temporary (`CREATE TEMP TABLE`, `#t`).
    pub temporary: BTreeSet<String>,
    /// Tables and views dropped.
    pub dropped: BTreeSet<String>,
    /// The targets whose whole contents the statement replaces (`CREATE
    /// [OR REPLACE] TABLE`, `INSERT OVERWRITE` of a whole table,
    /// `TRUNCATE`): a later read in the script sees only what it wrote.
    pub replaced: BTreeSet<String>,
}

/// The kind and table lineage of `stmt`.
pub(crate) fn statement_lineage(
    stmt: &Statement,
    dialect: SqlDialect,
) -> (StatementKind, TableLineage) {
    // `PREPARE p AS insert ...`: what `EXECUTE p` runs, read where it is
    // written (not running it only over-approximates).
    if let Statement::Prepare { statement, .. } = stmt {
        return statement_lineage(statement, dialect);
    }
    let mut reads = Reads::new(dialect);
    reads.root = stmt;
    let mut out = TableLineage::default();
    let kind = match writes(stmt, dialect, &mut out, &mut reads.skip) {
        Writes::Tables(kind) => kind,
        Writes::Nothing(kind) => return (kind, out),
    };
    let _ = stmt.visit(&mut reads);
    out.sources.extend(reads.tables);
    // A data-modifying statement inside another (a CTE's `DELETE ...
    // RETURNING`, `COPY (UPDATE ...)`) runs whether or not anything reads
    // its rows: it writes its table too. Its target is also counted as read
    // (the visit met it first), which only over-approximates.
    for nested in &reads.nested {
        writes(nested, dialect, &mut out, &mut Vec::new());
    }
    // `SELECT ... INTO t` makes a new table: what it holds is all it wrote.
    let select_into = !reads.into_targets.is_empty();
    for (rel, temporary) in reads.into_targets {
        out.replaced.insert(rel.clone());
        out.add_target(Some(rel), temporary);
    }
    let kind = if kind == StatementKind::Select && select_into {
        StatementKind::SelectInto
    } else {
        kind
    };
    (kind, out)
}

/// Whether `stmt` is DML that changes rows: `INSERT`, `UPDATE`, `DELETE`
/// or `MERGE`.
fn modifies_data(stmt: &Statement) -> bool {
    matches!(
        stmt,
        Statement::Insert(_)
            | Statement::Update { .. }
            | Statement::Delete(_)
            | Statement::Merge { .. }
    )
}

/// Which of the CTE names (`names`: name to its first position) a
/// one-part table name in `node` names. A map, not a list: a chain of
/// 50,000 CTEs was read in time growing with its square.
fn named_ctes<V: Visit>(
    node: &V,
    names: &HashMap<String, usize>,
    dialect: SqlDialect,
) -> BTreeSet<usize> {
    let mut found = BTreeSet::new();
    let _ = visit_relations(node, |name: &ObjectName| {
        if name.0.len() == 1
            && let Some(rel) = relation_name(name, dialect)
            && let Some(&i) = names.get(&rel)
        {
            found.insert(i);
        }
        ControlFlow::<()>::Continue(())
    });
    found
}

/// Whether a `TABLE t` command appears anywhere in `query`.
fn has_table_command(query: &Query) -> bool {
    struct Find;
    impl Visitor for Find {
        type Break = ();
        fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
            fn table(body: &SetExpr) -> bool {
                match body {
                    SetExpr::Table(_) => true,
                    SetExpr::SetOperation { left, right, .. } => table(left) || table(right),
                    _ => false,
                }
            }
            if table(&q.body) {
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        }
    }
    query.visit(&mut Find).is_break()
}

/// Whether a `DROP` of `object_type` drops a table or a view (ripple's
/// relations), not a function, schema or index.
pub(crate) fn holds_relation(object_type: ObjectType) -> bool {
    matches!(
        object_type,
        ObjectType::Table | ObjectType::View | ObjectType::MaterializedView
    )
}

/// What [`writes`] found.
enum Writes {
    /// A statement that may read and write tables; its reads are still to
    /// be collected.
    Tables(StatementKind),
    /// A statement with no lineage at all.
    Nothing(StatementKind),
}

/// Records what `stmt` writes (and reads outside any table reference, as
/// `LIKE` does) into `out`, and the table references that are its write
/// targets into `skip`, so the read visitor passes over them.
fn writes(
    stmt: &Statement,
    dialect: SqlDialect,
    out: &mut TableLineage,
    skip: &mut Vec<*const TableFactor>,
) -> Writes {
    let kind = match stmt {
        // `EXPLAIN ANALYZE DELETE ...` runs the statement (and `ANALYZE`
        // may be among its options): taken as the statement itself.
        Statement::Explain { statement, .. }
            if modifies_data(statement) || matches!(**statement, Statement::Query(_)) =>
        {
            return writes(statement, dialect, out, skip);
        }
        Statement::Query(query) => match &*query.body {
            // `WITH c AS (...) INSERT INTO t ...` (PostgreSQL): the CTEs
            // scope over a data-modifying statement.
            SetExpr::Insert(inner)
            | SetExpr::Update(inner)
            | SetExpr::Delete(inner)
            | SetExpr::Merge(inner) => return writes(inner, dialect, out, skip),
            _ => StatementKind::Select,
        },
        Statement::Insert(insert) => {
            if let TableObject::TableName(name) = &insert.table {
                out.add_target(relation_name(name, dialect), false);
                if insert.overwrite && insert.partitioned.is_none() {
                    out.replaced.extend(relation_name(name, dialect));
                }
            }
            if insert.overwrite {
                StatementKind::InsertOverwrite
            } else {
                StatementKind::Insert
            }
        }
        Statement::CreateTable(ct) => {
            let temporary = ct.temporary || ct.volatile;
            out.add_target(relation_name(&ct.name, dialect), temporary);
            // `IF NOT EXISTS` may leave an older table (and its rows) there.
            if !ct.if_not_exists {
                out.replaced.extend(relation_name(&ct.name, dialect));
            }
            let like = ct.like.as_ref().map(|like| match like {
                CreateTableLikeKind::Parenthesized(l) | CreateTableLikeKind::Plain(l) => &l.name,
            });
            for name in like.into_iter().chain(ct.clone.as_ref()) {
                if let Some(rel) = relation_name(name, dialect) {
                    out.sources.insert(rel);
                }
            }
            // A table over files (`CREATE EXTERNAL TABLE t (...) LOCATION
            // 's3://...'`, no query): its rows are the files'.
            let location = ct
                .location
                .as_ref()
                .or_else(|| ct.hive_formats.as_ref()?.location.as_ref())
                .filter(|_| ct.query.is_none());
            if let Some(path) = location {
                out.sources.insert(path.clone());
            }
            if ct.query.is_some() || like.is_some() || ct.clone.is_some() || location.is_some() {
                StatementKind::CreateTableAs
            } else {
                StatementKind::CreateTable
            }
        }
        Statement::CreateView(cv) => {
            out.add_target(relation_name(&cv.name, dialect), cv.temporary);
            if !cv.if_not_exists {
                out.replaced.extend(relation_name(&cv.name, dialect));
            }
            StatementKind::CreateView
        }
        Statement::Merge(merge) => {
            out.add_target(factor_relation(&merge.table, dialect), false);
            skip.push(&merge.table);
            StatementKind::Merge
        }
        Statement::Update(update) => {
            let from = match &update.from {
                Some(sqlparser::ast::UpdateTableFromKind::BeforeSet(t))
                | Some(sqlparser::ast::UpdateTableFromKind::AfterSet(t)) => t.as_slice(),
                None => &[],
            };
            let target = resolve_alias(&update.table.relation, from);
            out.add_target(factor_relation(target, dialect), false);
            skip.push(&update.table.relation);
            skip.push(target);
            StatementKind::Update
        }
        Statement::Delete(delete) => {
            let from = match &delete.from {
                FromTable::WithFromKeyword(t) | FromTable::WithoutKeyword(t) => t.as_slice(),
            };
            if delete.tables.is_empty() {
                // `DELETE FROM t` with no condition empties it: what the
                // script writes next is all it holds.
                let empties = delete.selection.is_none()
                    && delete.using.is_none()
                    && from.len() == 1
                    && from[0].joins.is_empty();
                for twj in from {
                    if let Some(rel) = factor_relation(&twj.relation, dialect) {
                        if empties {
                            out.replaced.insert(rel.clone());
                        }
                        out.add_target(Some(rel), false);
                    }
                    skip.push(&twj.relation);
                }
            } else {
                // MySQL's `DELETE t1 FROM t1 JOIN t2 ...`: the names before FROM
                // are the targets, possibly by alias.
                for target in &delete.tables {
                    let factor = from
                        .iter()
                        .flat_map(|t| {
                            std::iter::once(&t.relation).chain(t.joins.iter().map(|j| &j.relation))
                        })
                        .find(|f| {
                            factor_answers_to(
                                f,
                                target.0.len(),
                                &relation_name(target, dialect),
                                dialect,
                            )
                        });
                    match factor {
                        Some(f @ TableFactor::Table { name, .. }) => {
                            out.add_target(relation_name(name, dialect), false);
                            skip.push(f);
                        }
                        _ => out.add_target(relation_name(target, dialect), false),
                    }
                }
            }
            StatementKind::Delete
        }
        Statement::Copy {
            source, to, target, ..
        } => {
            // A file, URL or program on the other side is a path dataset
            // (`COPY t FROM 's3://...'`); STDIN and STDOUT are nobody's.
            let file = match target {
                CopyTarget::File { filename } if !filename.is_empty() => Some(filename.clone()),
                _ => None,
            };
            match source {
                CopySource::Table { table_name, .. } if !*to => {
                    out.add_target(relation_name(table_name, dialect), false);
                    out.sources.extend(file);
                }
                CopySource::Table { table_name, .. } => {
                    out.sources.extend(relation_name(table_name, dialect));
                    out.add_target(file, false);
                }
                CopySource::Query(_) => out.add_target(file.filter(|_| *to), false),
            }
            StatementKind::Copy
        }
        Statement::CopyIntoSnowflake {
            kind,
            into,
            from_obj,
            ..
        } => {
            let from = from_obj.as_ref().and_then(|n| relation_name(n, dialect));
            match kind {
                CopyIntoSnowflakeKind::Table => {
                    out.add_target(relation_name(into, dialect), false);
                }
                // `COPY INTO @stage/dir/ FROM t`: the stage is written.
                CopyIntoSnowflakeKind::Location => {
                    out.add_target(path_name(into, dialect).or_else(|| location(into)), false);
                }
            }
            out.sources.extend(from);
            StatementKind::Copy
        }
        Statement::Unload {
            query,
            query_text,
            to,
            ..
        } => {
            // Redshift keeps the query in a string: its reads are those of
            // the statements in it.
            if query.is_none()
                && let Some(text) = query_text
            {
                let parser_dialect = dialect.parser_dialect();
                if let Ok(inner) =
                    sqlparser::parser::Parser::parse_sql(parser_dialect.as_ref(), text)
                {
                    for stmt in &inner {
                        out.sources
                            .extend(statement_lineage(stmt, dialect).1.sources);
                    }
                }
            }
            out.add_target(Some(to.value.clone()).filter(|v| !v.is_empty()), false);
            StatementKind::Copy
        }
        // Snowflake: a named stage over a URL reads the files there.
        Statement::CreateStage {
            name,
            stage_params,
            if_not_exists,
            ..
        } => {
            if let (Some(url), Some(stage)) = (&stage_params.url, relation_name(name, dialect)) {
                out.sources.insert(url.clone());
                if !*if_not_exists {
                    out.replaced.insert(format!("@{stage}"));
                }
                out.add_target(Some(format!("@{stage}")), false);
            }
            return Writes::Nothing(StatementKind::Other);
        }
        Statement::Directory {
            path, overwrite, ..
        } => {
            out.add_target(Some(path.clone()).filter(|p| !p.is_empty()), false);
            if *overwrite {
                out.replaced.insert(path.clone());
            }
            StatementKind::InsertOverwrite
        }
        Statement::Drop {
            object_type, names, ..
        } => {
            if holds_relation(*object_type) {
                out.dropped
                    .extend(names.iter().filter_map(|n| relation_name(n, dialect)));
            }
            return Writes::Nothing(StatementKind::Drop);
        }
        Statement::DropFunction(_)
        | Statement::DropProcedure { .. }
        | Statement::DropTrigger(_) => return Writes::Nothing(StatementKind::Drop),
        // A procedure's body runs when it is called: its statements' tables
        // are what calling it reads and writes.
        Statement::CreateProcedure { body, .. } => {
            let statements = match body {
                sqlparser::ast::CreateProcedureBody::As(b) => b.statements(),
                sqlparser::ast::CreateProcedureBody::BeginAtomic(b) => &b.statements,
            };
            for inner in statements {
                let (_, l) = statement_lineage(inner, dialect);
                out.sources.extend(l.sources);
                for t in l.targets {
                    let temporary = l.temporary.contains(&t);
                    out.add_target(Some(t), temporary);
                }
                out.dropped.extend(l.dropped);
            }
            return Writes::Nothing(StatementKind::Other);
        }
        Statement::AlterTable(alter) => {
            let Some(old) = relation_name(&alter.name, dialect) else {
                return Writes::Nothing(StatementKind::Other);
            };
            for op in &alter.operations {
                match op {
                    // A move: the rows of `old` become `new` (in old's schema
                    // unless qualified), and `old` is gone.
                    AlterTableOperation::RenameTable { table_name } => {
                        let (RenameTableNameKind::As(new) | RenameTableNameKind::To(new)) =
                            table_name;
                        let Some(new_rel) = qualified_like(Some(&old), new, dialect) else {
                            continue;
                        };
                        out.sources.insert(old.clone());
                        out.dropped.insert(old.clone());
                        out.replaced.insert(new_rel.clone());
                        out.add_target(Some(new_rel), false);
                    }
                    // Snowflake: each takes the other's rows.
                    AlterTableOperation::SwapWith { table_name } => {
                        if let Some(other) = relation_name(table_name, dialect) {
                            for rel in [&old, &other] {
                                out.sources.insert(rel.clone());
                                out.replaced.insert(rel.clone());
                                out.add_target(Some(rel.clone()), false);
                            }
                        }
                    }
                    _ => {}
                }
            }
            return Writes::Nothing(StatementKind::Other);
        }
        Statement::Truncate(t) => {
            // Writes (empties) the table; a whole-table truncate replaces
            // its contents.
            for target in &t.table_names {
                out.add_target(relation_name(&target.name, dialect), false);
                if t.partitions.is_none() {
                    out.replaced.extend(relation_name(&target.name, dialect));
                }
            }
            return Writes::Nothing(StatementKind::Truncate);
        }
        // A variable set from a query reads its tables (a watermark, a
        // count): the visitor finds them.
        Statement::Set(_) | Statement::Declare { .. } => StatementKind::Session,
        Statement::Use(_)
        | Statement::StartTransaction { .. }
        | Statement::Commit { .. }
        | Statement::Rollback { .. }
        | Statement::Savepoint { .. }
        | Statement::ReleaseSavepoint { .. }
        | Statement::AlterSession { .. }
        | Statement::Explain { .. }
        | Statement::ExplainTable { .. }
        | Statement::ShowTables { .. }
        | Statement::ShowColumns { .. }
        | Statement::ShowVariable { .. }
        | Statement::ShowVariables { .. }
        | Statement::ShowCreate { .. }
        | Statement::ShowDatabases { .. }
        | Statement::ShowSchemas { .. }
        | Statement::ShowViews { .. }
        | Statement::ShowFunctions { .. }
        | Statement::Reset(_)
        | Statement::Discard { .. } => return Writes::Nothing(StatementKind::Session),
        _ => return Writes::Nothing(StatementKind::Other),
    };
    Writes::Tables(kind)
}

impl TableLineage {
    pub(crate) fn add_target(&mut self, rel: Option<String>, temporary: bool) {
        if let Some(rel) = rel {
            // T-SQL: `#t` and `##t` are temporary by name.
            if temporary || rel.starts_with('#') {
                self.temporary.insert(rel.clone());
            }
            self.targets.insert(rel);
        }
    }
}

/// The relation a table factor names: a table (`s.t`), Databricks'
/// `IDENTIFIER('s.t')`, a T-SQL table with old-style hints (`t(NOLOCK)`);
/// `None` for a table function (`generate_series(...)`), a subquery, an
/// `IDENTIFIER` of a variable.
fn factor_relation(factor: &TableFactor, dialect: SqlDialect) -> Option<String> {
    match factor {
        TableFactor::Table {
            name,
            args: Some(args),
            ..
        } => {
            if let [ObjectNamePart::Identifier(f)] = name.0.as_slice()
                && f.value.eq_ignore_ascii_case("identifier")
            {
                return identifier_call(f, &args.args, dialect);
            }
            if let Some(path) = file_function(name, &args.args) {
                return Some(path);
            }
            let hints_only = dialect == SqlDialect::MsSql
                && !args.args.is_empty()
                && args.args.iter().all(|a| {
                    matches!(a, FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Identifier(i)))
                        if i.quote_style.is_none() && TSQL_HINTS.contains(&i.value.to_ascii_uppercase().as_str()))
                });
            hints_only.then(|| relation_name(name, dialect)).flatten()
        }
        TableFactor::Table {
            name, args: None, ..
        }
        | TableFactor::SemanticView { name, .. } => relation_name(name, dialect),
        _ => None,
    }
}

/// Functions that read files, by name (Databricks' `read_files`, DuckDB's
/// `read_parquet`, `read_csv[_auto]`, `read_json[_auto]`,
/// `parquet_scan`): with a literal first argument, the path it reads.
fn file_function(name: &ObjectName, args: &[FunctionArg]) -> Option<String> {
    const READERS: &[&str] = &[
        "read_files",
        "read_parquet",
        "parquet_scan",
        "read_csv",
        "read_csv_auto",
        "read_json",
        "read_json_auto",
        "read_ndjson",
        "read_ndjson_auto",
    ];
    let [ObjectNamePart::Identifier(f)] = name.0.as_slice() else {
        return None;
    };
    if f.quote_style.is_some() || !READERS.iter().any(|r| f.value.eq_ignore_ascii_case(r)) {
        return None;
    }
    let Some(FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Value(v)))) = args.first() else {
        return None;
    };
    match &v.value {
        sqlparser::ast::Value::SingleQuotedString(p) if !p.is_empty() => {
            Some(super::names::located(p))
        }
        _ => None,
    }
}

/// T-SQL table hints, which old scripts write without `WITH`: `t(NOLOCK)`.
const TSQL_HINTS: &[&str] = &[
    "NOLOCK",
    "READUNCOMMITTED",
    "READCOMMITTED",
    "REPEATABLEREAD",
    "SERIALIZABLE",
    "HOLDLOCK",
    "UPDLOCK",
    "ROWLOCK",
    "PAGLOCK",
    "TABLOCK",
    "TABLOCKX",
    "XLOCK",
    "NOWAIT",
    "READPAST",
    "NOEXPAND",
];

/// The location `COPY INTO 's3://...'` names (a quoted URL parsed as a name).
fn location(name: &ObjectName) -> Option<String> {
    match name.0.as_slice() {
        [ObjectNamePart::Identifier(i)] if i.value.contains("://") => {
            Some(super::secrets::masked_text(&i.value).into_owned())
        }
        _ => None,
    }
}

/// `UPDATE a SET ... FROM t AS a` (T-SQL) names its target by an alias of a
/// FROM table: the table behind the alias is the one written.
fn resolve_alias<'a>(target: &'a TableFactor, from: &'a [TableWithJoins]) -> &'a TableFactor {
    let TableFactor::Table {
        name, alias: None, ..
    } = target
    else {
        return target;
    };
    let [single] = name.0.as_slice() else {
        return target;
    };
    let Some(ident) = single.as_ident() else {
        return target;
    };
    from.iter()
        .flat_map(|t| std::iter::once(&t.relation).chain(t.joins.iter().map(|j| &j.relation)))
        .find(|f| matches!(f, TableFactor::Table { alias: Some(a), .. } if a.name.value.eq_ignore_ascii_case(&ident.value)))
        .unwrap_or(target)
}

/// Whether `factor` is the table a MySQL multi-table DELETE names (by alias
/// when the name has one part, else by relation name).
fn factor_answers_to(
    factor: &TableFactor,
    parts: usize,
    wanted: &Option<String>,
    dialect: SqlDialect,
) -> bool {
    let TableFactor::Table { name, alias, .. } = factor else {
        return false;
    };
    let Some(wanted) = wanted else { return false };
    if let (1, Some(alias)) = (parts, alias) {
        return &ident_name(&alias.name, dialect) == wanted;
    }
    relation_name(name, dialect).as_ref() == Some(wanted)
}

/// The CTE names a query makes visible, while its CTEs and body are visited.
struct CteScope {
    /// The query that owns the WITH clause.
    owner: *const Query,
    /// CTE names, each to its first position in declaration order.
    names: HashMap<String, usize>,
    /// Each CTE's body to its position, to know when it has been visited.
    bodies: HashMap<*const Query, usize>,
    /// How many of `names` are visible now.
    visible: usize,
}

/// Collects the tables a statement reads.
struct Reads {
    dialect: SqlDialect,
    scopes: Vec<CteScope>,
    /// Table references that are write targets, not reads (by address).
    skip: Vec<*const TableFactor>,
    tables: BTreeSet<String>,
    into_targets: Vec<(String, bool)>,
    /// Bodies of CTEs nothing in their statement reads: dead code, whose
    /// tables are not read.
    dead: HashSet<*const Query>,
    /// How many dead bodies the visit is inside.
    inside_dead: usize,
    /// The statement visited, by address (its nested statements are not it).
    root: *const Statement,
    /// Data-modifying statements nested in it (see [`statement_lineage`]).
    nested: Vec<Statement>,
}

impl Reads {
    fn new(dialect: SqlDialect) -> Self {
        Reads {
            dialect,
            scopes: Vec::new(),
            skip: Vec::new(),
            tables: BTreeSet::new(),
            into_targets: Vec::new(),
            dead: HashSet::new(),
            inside_dead: 0,
            root: std::ptr::null(),
            nested: Vec::new(),
        }
    }

    /// `TABLE t` (PostgreSQL, MySQL) reads `t` without a table reference
    /// node of its own.
    fn table_commands(&mut self, body: &SetExpr) {
        match body {
            SetExpr::Table(table) => {
                let idents: Vec<_> = table
                    .schema_name
                    .iter()
                    .chain(&table.table_name)
                    .cloned()
                    .collect();
                if let Some(rel) = relation_name_of_idents(&idents, self.dialect) {
                    self.read(rel, idents.len());
                }
            }
            SetExpr::SetOperation { left, right, .. } => {
                self.table_commands(left);
                self.table_commands(right);
            }
            _ => {}
        }
    }

    /// Records a read of `rel` (written with `parts` name parts), unless it
    /// is an unqualified name of a CTE in scope.
    fn read(&mut self, rel: String, parts: usize) {
        if self.inside_dead == 0 && !(parts == 1 && self.is_cte(&rel)) {
            self.tables.insert(rel);
        }
    }

    /// The CTE bodies of `query` that neither its body nor a CTE it uses
    /// (however indirectly) names.
    fn unused_ctes(
        &self,
        query: &Query,
        with: &With,
        names: &HashMap<String, usize>,
    ) -> Vec<*const Query> {
        // `TABLE c` names a CTE without a relation node: where one appears,
        // every CTE is kept.
        if has_table_command(query) {
            return Vec::new();
        }
        let uses: Vec<BTreeSet<usize>> = with
            .cte_tables
            .iter()
            .map(|cte| named_ctes(&*cte.query, names, self.dialect))
            .collect();
        let mut live = named_ctes(&*query.body, names, self.dialect);
        if let Some(order) = &query.order_by {
            live.extend(named_ctes(order, names, self.dialect));
        }
        let mut stack: Vec<usize> = live.iter().copied().collect();
        while let Some(i) = stack.pop() {
            for &j in &uses[i] {
                if live.insert(j) {
                    stack.push(j);
                }
            }
        }
        with.cte_tables
            .iter()
            .enumerate()
            .filter(|(i, _)| !live.contains(i))
            .map(|(_, cte)| &*cte.query as *const Query)
            .collect()
    }

    fn is_cte(&self, name: &str) -> bool {
        self.scopes
            .iter()
            .any(|s| s.names.get(name).is_some_and(|&i| i < s.visible))
    }
}

impl Visitor for Reads {
    type Break = ();

    fn pre_visit_statement(&mut self, statement: &Statement) -> ControlFlow<()> {
        // The top statement's own body (`WITH c AS (...) INSERT ...`) is
        // written by `writes` already; running it again changes nothing.
        if !std::ptr::eq(statement, self.root) && modifies_data(statement) {
            self.nested.push(statement.clone());
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        if self.dead.contains(&(query as *const Query)) {
            self.inside_dead += 1;
        }
        if let Some(with) = &query.with {
            let mut names: HashMap<String, usize> = HashMap::new();
            for (i, cte) in with.cte_tables.iter().enumerate() {
                names
                    .entry(ident_name(&cte.alias.name, self.dialect))
                    .or_insert(i);
            }
            let dead = self.unused_ctes(query, with, &names);
            self.dead.extend(dead);
            let visible = if with.recursive {
                with.cte_tables.len()
            } else {
                0
            };
            self.scopes.push(CteScope {
                owner: query,
                names,
                bodies: with
                    .cte_tables
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (&*c.query as *const Query, i))
                    .collect(),
                visible,
            });
        }
        self.table_commands(&query.body);
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        let query: *const Query = query;
        if self.dead.contains(&query) {
            self.inside_dead -= 1;
        }
        if self.scopes.last().is_some_and(|s| s.owner == query) {
            self.scopes.pop();
        }
        if let Some(scope) = self.scopes.last_mut()
            && let Some(&i) = scope.bodies.get(&query)
        {
            scope.visible = scope.visible.max(i + 1);
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
        if self.skip.contains(&(factor as *const TableFactor)) {
            return ControlFlow::Continue(());
        }
        if let Some(rel) = factor_relation(factor, self.dialect) {
            let parts = match factor {
                TableFactor::Table {
                    name, args: None, ..
                } => name.0.len(),
                _ => 2,
            };
            self.read(rel, parts);
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_select(&mut self, select: &Select) -> ControlFlow<()> {
        if let Some(into) = &select.into {
            for target in &into.targets {
                let rel = match target {
                    Expr::Identifier(ident) => {
                        relation_name_of_idents(std::slice::from_ref(ident), self.dialect)
                    }
                    Expr::CompoundIdentifier(idents) => {
                        relation_name_of_idents(idents, self.dialect)
                    }
                    _ => None,
                };
                if let Some(rel) = rel {
                    self.into_targets.push((rel, into.temporary));
                }
            }
        }
        ControlFlow::Continue(())
    }
}
