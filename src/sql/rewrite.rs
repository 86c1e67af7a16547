//! Rewriting statements to use other relations (a job redirected to write
//! shadows), and quoting identifiers per dialect for the SQL ripple writes.
//!
//! Every name that can denote a relation is redirected — reads, writes, and
//! the DDL names sqlparser's relation visitor does not reach (`DROP`,
//! `ALTER ... RENAME TO`, `COMMENT ON`, `GRANT ON`) — and each rewritten
//! statement says which relations it changes, so a caller can refuse any
//! statement that would still change one it did not redirect.

use std::collections::{BTreeSet, HashMap};
use std::ops::ControlFlow;

use sqlparser::ast::{
    AlterTableOperation, CommentObject, CopyIntoSnowflakeKind, CopySource, CreateTableLikeKind,
    Expr, GrantObjects, Ident, ObjectName, ObjectNamePart, RenameTableNameKind, Statement,
    VisitMut, visit_expressions_mut, visit_relations, visit_relations_mut,
};

use super::dialect::SqlDialect;
use super::extract::{StatementKind, holds_relation, statement_lineage};
pub use super::names::{has_exact_lower_part, print_parts, relation_parts};
use super::names::{qualified_like, relation_name};
use super::script::StatementError;

/// The quote character of `dialect`'s identifiers.
fn quote_char(dialect: SqlDialect) -> char {
    use SqlDialect::*;
    match dialect {
        BigQuery | MySql | MariaDb | Hive | Spark | Databricks | ClickHouse => '`',
        MsSql => '[',
        _ => '"',
    }
}

/// An identifier quoted for `dialect`, with its quote character doubled
/// inside, in the case the engine stores it: ripple keeps names folded to
/// lower case, and on an engine that folds unquoted names to upper case
/// (Snowflake, Oracle, Db2, Exasol) `"orders"` quoted is another table
/// than the `ORDERS` that `orders` names, so a plain lower-case part is
/// printed in upper case.
pub fn quote_ident(dialect: SqlDialect, part: &str) -> String {
    let part = engine_case(dialect, part);
    match quote_char(dialect) {
        '`' => format!("`{}`", part.replace('`', "``")),
        '[' => format!("[{}]", part.replace(']', "]]")),
        _ => format!("\"{}\"", part.replace('"', "\"\"")),
    }
}

/// `part` as the engine stores it (see [`quote_ident`]).
fn engine_case(dialect: SqlDialect, part: &str) -> std::borrow::Cow<'_, str> {
    let plain = part
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$');
    if dialect.identifier_case() == super::dialect::IdentifierCase::FoldUnquotedUpper
        && plain
        && !part.bytes().any(|b| b.is_ascii_uppercase())
    {
        std::borrow::Cow::Owned(part.to_ascii_uppercase())
    } else {
        std::borrow::Cow::Borrowed(part)
    }
}

/// An identifier of `dialect`, quoted, in the engine's case.
fn quoted(dialect: SqlDialect, part: &str) -> Ident {
    Ident::with_quote(quote_char(dialect), engine_case(dialect, part))
}

/// `relation` with `suffix` appended to its last part, printed.
pub fn with_suffix(relation: &str, suffix: &str) -> String {
    let mut parts = relation_parts(relation);
    if let Some(last) = parts.last_mut() {
        last.push_str(suffix);
    }
    print_parts(&parts)
}

/// A relation with every part quoted for `dialect`.
pub fn quote_relation(dialect: SqlDialect, relation: &str) -> String {
    relation_parts(relation)
        .iter()
        .map(|p| quote_ident(dialect, p))
        .collect::<Vec<_>>()
        .join(".")
}

/// One statement after [`redirect`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewritten {
    /// 1-based position of the statement in the script.
    pub index: usize,
    /// The statement as it will run.
    pub sql: String,
    /// What it does.
    pub kind: StatementKind,
    /// Every relation it creates, writes, drops, truncates, alters,
    /// renames, indexes, grants on or comments on, as ripple prints names.
    pub changes: BTreeSet<String>,
    /// Why ripple cannot tell what it changes, when it cannot.
    pub opaque: Option<String>,
    /// Why, after it, a temporary table's name could denote another table
    /// (`discard`, `on commit drop`, a `search_path` naming `pg_temp`).
    pub unbinds_temporary: Option<&'static str>,
}

/// The statements of `sql` with every relation named in `map` (as ripple
/// prints relations) replaced by its value, each with what it changes.
pub fn redirect(
    sql: &str,
    dialect: SqlDialect,
    map: &HashMap<String, String>,
) -> Result<Vec<Rewritten>, StatementError> {
    redirect_keyed(sql, dialect, map, &[])
}

/// [`redirect`], with every `on conflict on constraint name` of an insert
/// into a redirected table written as `on conflict (columns)`: a copy's
/// constraints have names of their own. `keys` gives each constraint name
/// (as the engine compares names) its columns; an unknown name makes the
/// statement opaque.
pub fn redirect_keyed(
    sql: &str,
    dialect: SqlDialect,
    map: &HashMap<String, String>,
    keys: &[(String, Vec<String>)],
) -> Result<Vec<Rewritten>, StatementError> {
    super::with_statements(sql, dialect, |statements| {
        // `USE` and `SET search_path` move where unqualified names point:
        // they are looked up as the session would resolve them.
        let mut session = super::session::Session::default();
        statements
            .iter_mut()
            .enumerate()
            .map(|(n, stmt)| {
                session.follow(stmt, dialect);
                let unknown = conflict_by_columns(stmt, dialect, map, keys, &session);
                let mut r = rewrite_statement(n + 1, stmt, dialect, map, &mut session);
                if r.opaque.is_none() {
                    r.opaque = unknown;
                }
                r
            })
            .collect()
    })
}

/// Rewrites `on conflict on constraint` (see [`redirect_keyed`]); why it
/// could not, when it could not.
fn conflict_by_columns(
    stmt: &mut Statement,
    dialect: SqlDialect,
    map: &HashMap<String, String>,
    keys: &[(String, Vec<String>)],
    session: &super::session::Session,
) -> Option<String> {
    use sqlparser::ast::{ConflictTarget, OnInsert, TableObject};
    let Statement::Insert(insert) = stmt else {
        return None;
    };
    let TableObject::TableName(target) = &insert.table else {
        return None;
    };
    if !relation_name(target, dialect)
        .is_some_and(|r| map.contains_key(&session.qualify(&r)) || map.contains_key(&r))
    {
        return None;
    }
    let Some(OnInsert::OnConflict(on)) = &mut insert.on else {
        return None;
    };
    let Some(ConflictTarget::OnConstraint(name)) = &on.conflict_target else {
        return None;
    };
    let ident = name.0.last().and_then(ObjectNamePart::as_ident)?;
    // Unquoted names fold to lower case (PostgreSQL; DuckDB compares them
    // case-insensitively, and its facts' names are folded so).
    let folded = match (ident.quote_style, dialect) {
        (Some(_), SqlDialect::Postgres) => ident.value.clone(),
        _ => ident.value.to_lowercase(),
    };
    match keys.iter().find(|(k, _)| *k == folded) {
        Some((_, columns)) => {
            on.conflict_target = Some(ConflictTarget::Columns {
                columns: columns.iter().map(|c| quoted(dialect, c)).collect(),
                predicate: None,
            });
            None
        }
        None => Some(format!(
            "its `on conflict on constraint {ident}` names a constraint ripple knows nothing of, and the table's copy names its constraints otherwise; describe the table to the plan (`tables:` in ripple.yml) or write `on conflict (columns)`"
        )),
    }
}

/// `name` as the parsed name of `relation`, quoted for `dialect`.
fn object_name(dialect: SqlDialect, relation: &str) -> ObjectName {
    ObjectName(
        relation_parts(relation)
            .into_iter()
            .map(|p| ObjectNamePart::Identifier(quoted(dialect, &p)))
            .collect(),
    )
}

fn rewrite_statement(
    index: usize,
    stmt: &mut Statement,
    dialect: SqlDialect,
    map: &HashMap<String, String>,
    session: &mut super::session::Session,
) -> Rewritten {
    let mut opaque = None;
    let mut named = BTreeSet::new();
    let swap = |name: &mut ObjectName| {
        // The first name on the search path the plan restates; the name
        // as written last.
        if let Some(shadow) = relation_name(name, dialect).and_then(|p| {
            session
                .candidates(&p)
                .iter()
                .find_map(|c| map.get(c))
                .or_else(|| map.get(&p))
        }) {
            *name = object_name(dialect, shadow);
        }
    };
    // Renames first: the new name is relative to the old one's schema,
    // which must be read before the old name is redirected.
    if let Statement::AlterTable(alter) = stmt {
        let old = relation_name(&alter.name, dialect);
        for op in &mut alter.operations {
            if let AlterTableOperation::RenameTable { table_name } = op {
                let new = match table_name {
                    RenameTableNameKind::As(n) | RenameTableNameKind::To(n) => n,
                };
                match rename_target(old.as_deref(), new, dialect, map) {
                    Ok(Some(replacement)) => *new = replacement,
                    Ok(None) => {}
                    Err(why) => opaque = Some(why),
                }
                if let Some(full) = qualified_like(old.as_deref(), new, dialect) {
                    named.insert(full);
                }
            }
        }
    }
    let _ = visit_relations_mut(stmt, |name| {
        swap(name);
        ControlFlow::<()>::Continue(())
    });
    // The visitor does not reach the table `SELECT ... INTO t` makes.
    let _ = stmt.visit(&mut SelectInto(&swap));
    // Columns qualified by a redirected table's full name (`prod.t.y`)
    // follow it, or they would point at a table no longer in the query.
    let _ = visit_expressions_mut(stmt, |e| {
        if let Expr::CompoundIdentifier(idents) = e
            && idents.len() > 2
        {
            let (table, column) = idents.split_at(idents.len() - 1);
            let printed = relation_name(&ObjectName::from(table.to_vec()), dialect);
            if let Some(shadow) = printed.and_then(|p| map.get(&p)) {
                let mut parts: Vec<Ident> = relation_parts(shadow)
                    .into_iter()
                    .map(|p| quoted(dialect, &p))
                    .collect();
                parts.extend(column.iter().cloned());
                *idents = parts;
            }
        }
        ControlFlow::<()>::Continue(())
    });
    match stmt {
        Statement::Drop {
            object_type, names, ..
        } => {
            if holds_relation(*object_type) {
                for n in names.iter_mut() {
                    swap(n);
                    named.extend(relation_name(n, dialect));
                }
            } else {
                opaque = Some(format!(
                    "ripple cannot tell which tables `DROP {object_type}` changes"
                ));
            }
        }
        Statement::RenameTable(renames) => {
            for r in renames.iter_mut() {
                swap(&mut r.old_name);
                swap(&mut r.new_name);
                named.extend(relation_name(&r.old_name, dialect));
                named.extend(relation_name(&r.new_name, dialect));
            }
        }
        Statement::Comment {
            object_type,
            object_name,
            ..
        } => match object_type {
            CommentObject::Table | CommentObject::View | CommentObject::MaterializedView => {
                swap(object_name);
                named.extend(relation_name(object_name, dialect));
            }
            CommentObject::Column => {
                // `table.column`: the table is all but the last part.
                let mut table =
                    ObjectName(object_name.0[..object_name.0.len().saturating_sub(1)].to_vec());
                swap(&mut table);
                named.extend(relation_name(&table, dialect));
                if let Some(column) = object_name.0.last().cloned() {
                    table.0.push(column);
                    *object_name = table;
                }
            }
            _ => {}
        },
        // `CREATE TABLE t (LIKE s)` and `CLONE s` name a relation the
        // visitor does not reach: a scratch table copied must be the shadow's.
        Statement::CreateTable(ct) => {
            if let Some(
                CreateTableLikeKind::Parenthesized(like) | CreateTableLikeKind::Plain(like),
            ) = &mut ct.like
            {
                swap(&mut like.name);
            }
            if let Some(clone) = &mut ct.clone {
                swap(clone);
            }
        }
        // The relation visitor does not reach the table a COPY loads.
        Statement::Copy {
            source: CopySource::Table { table_name, .. },
            ..
        } => swap(table_name),
        Statement::CopyIntoSnowflake {
            kind: CopyIntoSnowflakeKind::Table,
            into,
            ..
        } => swap(into),
        Statement::Grant(g) => {
            grant_objects(&mut g.objects, &mut named, &mut opaque, dialect, &swap)
        }
        Statement::Revoke(r) => {
            grant_objects(&mut r.objects, &mut named, &mut opaque, dialect, &swap)
        }
        _ => {}
    }
    if opaque.is_none()
        && let Some(ident) = misprinted_ident(stmt)
    {
        opaque = Some(format!(
            "the name {ident:?} holds a run of quotes (or a backslash before a quote) that the SQL printer writes back as a different name; rename the table"
        ));
    }
    if opaque.is_none() {
        opaque = beyond_tables(stmt);
    }
    if opaque.is_none() && !checkable(stmt) {
        let text = stmt.to_string();
        let words: Vec<&str> = text.split_whitespace().take(3).collect();
        let refresh = text
            .get(..24)
            .is_some_and(|h| h.eq_ignore_ascii_case("refresh materialized vie"));
        opaque = Some(if refresh {
            format!(
                "ripple cannot tell what `{} ...` changes; the plan's swap refreshes the materialized views that read restated tables itself (docs/plan.md): move the refresh out of this job (a job of its own, or the pipeline's scheduler)",
                words.join(" ")
            )
        } else {
            format!(
                "ripple cannot tell what `{} ...` changes (procedures, functions, triggers, schemas and the like are not run by a plan)",
                words.join(" ")
            )
        });
    }
    // A table made `partition of` or `inherits (...)` another stays part
    // of it: its rows show in the parent, which is locked while the task
    // runs. The parent counts as changed (refused unless it is the job's).
    if let Statement::CreateTable(ct) = &*stmt {
        for parent in ct.inherits.iter().flatten().chain(&ct.partition_of) {
            named.extend(relation_name(parent, dialect).map(|p| session.qualify(&p)));
        }
    }
    let unbinds_temporary = unbinds_temporary(stmt);
    let (kind, mut lineage) = statement_lineage(stmt, dialect);
    session.qualify_all(&mut lineage, dialect);
    let mut changes: BTreeSet<String> = lineage.targets.iter().cloned().collect();
    changes.extend(lineage.dropped.iter().cloned());
    changes.extend(named);
    if matches!(
        kind,
        StatementKind::Truncate | StatementKind::Other | StatementKind::Drop
    ) {
        // DDL changes what it names: `TRUNCATE t`, `ALTER TABLE t`,
        // `CREATE INDEX ... ON t`, `ANALYZE t`.
        let _ = visit_relations(stmt, |name| {
            changes.extend(relation_name(name, dialect));
            ControlFlow::<()>::Continue(())
        });
    }
    Rewritten {
        unbinds_temporary,
        index,
        sql: stmt.to_string(),
        kind,
        changes,
        opaque,
    }
}

/// Applies a rename to every `SELECT ... INTO` target of a statement.
struct SelectInto<'a, F: Fn(&mut ObjectName)>(&'a F);

impl<F: Fn(&mut ObjectName)> sqlparser::ast::VisitorMut for SelectInto<'_, F> {
    type Break = ();

    fn pre_visit_select(&mut self, select: &mut sqlparser::ast::Select) -> ControlFlow<()> {
        for target in select.into.iter_mut().flat_map(|i| i.targets.iter_mut()) {
            let idents = match target {
                Expr::Identifier(ident) => vec![ident.clone()],
                Expr::CompoundIdentifier(idents) => idents.clone(),
                _ => continue,
            };
            let mut name = ObjectName::from(idents);
            (self.0)(&mut name);
            let idents: Vec<Ident> = name
                .0
                .iter()
                .filter_map(|p| p.as_ident().cloned())
                .collect();
            *target = match idents.as_slice() {
                [one] => Expr::Identifier(one.clone()),
                _ => Expr::CompoundIdentifier(idents),
            };
        }
        ControlFlow::Continue(())
    }
}

/// The first quoted identifier of `stmt` that sqlparser would print as
/// another name: its printer leaves `""` and `\"` inside a quoted name as
/// they are, taking them for escapes already made, so `"t"""""""` (the
/// name `t"""`) comes back as `t""`, a different table.
fn misprinted_ident(stmt: &Statement) -> Option<String> {
    struct Find(Option<String>);
    impl sqlparser::ast::Visitor for Find {
        type Break = ();
        fn pre_visit_relation(&mut self, name: &ObjectName) -> ControlFlow<()> {
            for part in &name.0 {
                if let Some(ident) = part.as_ident() {
                    self.check(ident)?;
                }
            }
            ControlFlow::Continue(())
        }
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            match e {
                Expr::Identifier(ident) => self.check(ident),
                Expr::CompoundIdentifier(idents) => idents.iter().try_for_each(|i| self.check(i)),
                _ => ControlFlow::Continue(()),
            }
        }
    }
    impl Find {
        fn check(&mut self, ident: &Ident) -> ControlFlow<()> {
            let Some(q) = ident.quote_style.filter(|q| *q != '[') else {
                return ControlFlow::Continue(());
            };
            let v = &ident.value;
            if v.contains(&format!("{q}{q}")) || v.contains(&format!("\\{q}")) {
                self.0 = Some(v.clone());
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        }
    }
    let mut find = Find(None);
    let _ = sqlparser::ast::Visit::visit(stmt, &mut find);
    find.0
}

/// Why, after `stmt`, a temporary table's name could reach the table of
/// that name in a schema: read from the statement, not its text (a string
/// literal holding `on commit drop` is no such clause).
fn unbinds_temporary(stmt: &Statement) -> Option<&'static str> {
    use sqlparser::ast::{OnCommit, Set};
    match stmt {
        Statement::Rollback { .. } => Some(
            "`rollback` undoes the temporary tables made in its transaction, after which their names would reach production's tables",
        ),
        Statement::Discard { .. } => Some(
            "`discard` drops the job's temporary tables, after which their names would reach production's tables",
        ),
        Statement::CreateTable(ct) if ct.on_commit == Some(OnCommit::Drop) => Some(
            "a temporary table made `on commit drop` is gone at the next commit, after which its name would reach production's table",
        ),
        Statement::Set(Set::SingleAssignment {
            variable, values, ..
        }) if variable.to_string().eq_ignore_ascii_case("search_path")
            && values
                .iter()
                .any(|v| v.to_string().to_ascii_lowercase().contains("pg_temp")) =>
        {
            Some(
                "a `search_path` naming `pg_temp` can put production's schemas before the job's temporary tables",
            )
        }
        _ => None,
    }
}

/// The first function call in `v` whose name `pick` accepts (given its
/// parts, lower-case), as written.
pub(crate) fn first_call<V: sqlparser::ast::Visit>(
    v: &V,
    pick: impl FnMut(&[String]) -> bool,
) -> Option<String> {
    use sqlparser::ast::{TableFactor, Visitor};
    /// Calls in expressions, and table functions in `FROM`
    /// (`from t, nextval('s') as b(id)`), which are no expressions.
    struct Calls<F> {
        pick: F,
        found: Option<String>,
    }
    impl<F: FnMut(&[String]) -> bool> Calls<F> {
        fn check(&mut self, name: &ObjectName) -> ControlFlow<()> {
            let parts: Vec<String> = name
                .0
                .iter()
                .filter_map(|p| p.as_ident().map(|i| i.value.to_lowercase()))
                .collect();
            if (self.pick)(&parts) {
                self.found = Some(name.to_string());
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        }
    }
    impl<F: FnMut(&[String]) -> bool> Visitor for Calls<F> {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            match e {
                Expr::Function(f) => self.check(&f.name),
                _ => ControlFlow::Continue(()),
            }
        }
        fn pre_visit_table_factor(&mut self, t: &TableFactor) -> ControlFlow<()> {
            match t {
                TableFactor::Table {
                    name,
                    args: Some(_),
                    ..
                }
                | TableFactor::Function { name, .. } => self.check(name),
                _ => ControlFlow::Continue(()),
            }
        }
    }
    let mut calls = Calls { pick, found: None };
    let _ = v.visit(&mut calls);
    calls.found
}

/// Built-in functions that change the database beyond tables the moment
/// they run (a sequence's position, a setting, large objects, other
/// sessions, another server, replication, statistics): a job calling one
/// would change production before any swap, whatever table it writes.
/// Families are in [`WRITING_PREFIXES`].
pub(crate) const WRITING_FUNCTIONS: [&str; 17] = [
    "setval",
    "set_config",
    "pg_notify",
    "lowrite",
    "pg_terminate_backend",
    "pg_cancel_backend",
    "pg_reload_conf",
    "pg_rotate_logfile",
    "pg_switch_wal",
    "pg_promote",
    "pg_backup_start",
    "pg_backup_stop",
    "pg_start_backup",
    "pg_stop_backup",
    "pg_import_system_collations",
    "pg_log_standby_snapshot",
    "pg_replication_slot_advance",
];

/// Families of built-ins that act beyond tables, by the start of their
/// names: large objects, dblink's (`dblink` as a table function runs any
/// statement on another server), advisory locks (`pg_try_advisory_lock`
/// too), statistics resets, replication slots and origins, server files,
/// logical decoding (`pg_logical_slot_get_changes` consumes a slot), WAL
/// replay, and what `pg_create_`/`pg_drop_`/`pg_copy_` make or remove.
pub(crate) const WRITING_PREFIXES: [&str; 13] = [
    "lo_",
    "dblink",
    "pg_advisory",
    "pg_try_advisory",
    "pg_stat_reset",
    "pg_replication_origin",
    "pg_file_",
    "pg_logical_",
    "pg_wal_replay_",
    "pg_create_",
    "pg_drop_",
    "pg_copy_",
    "pg_sequence_",
];

/// Whether the built-in `name` (lowercase, unqualified) acts beyond tables
/// when it runs (see [`WRITING_FUNCTIONS`]).
pub(crate) fn writes_beyond_tables(name: &str) -> bool {
    WRITING_FUNCTIONS.contains(&name) || WRITING_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Why `stmt`, though it names no table to change, would still act on
/// production: a role switch (the tables the task makes would belong to
/// that role, and the swap would put them in production so), or a row
/// lock on what it reads (production's own writers would wait on the
/// backfill until its transaction ends).
fn beyond_tables(stmt: &Statement) -> Option<String> {
    use sqlparser::ast::Set;
    let role = match stmt {
        Statement::Set(Set::SetRole { .. } | Set::SetSessionAuthorization(_)) => true,
        Statement::Set(Set::SingleAssignment { variable, .. }) => {
            // `set "role" = x` is the same setting as `set role = x`.
            let name: Vec<String> = variable
                .0
                .iter()
                .filter_map(|p| p.as_ident())
                .map(|i| i.value.to_ascii_lowercase())
                .collect();
            matches!(
                name.as_slice(),
                [n] if n == "role" || n == "session_authorization"
            )
        }
        _ => false,
    };
    if role {
        return Some(
            "it switches the session's role: what the task creates would belong to that role, and the swap would put it in production so; run the plan as the role that owns the tables instead".to_string(),
        );
    }
    // Settings that change how the engine reads the text after them: ripple
    // reads (and rewrites) the job with standard strings, so a literal the
    // engine then reads otherwise could end where ripple did not see it.
    if let Statement::Set(Set::SingleAssignment { variable, .. }) = stmt {
        let name = variable
            .0
            .last()
            .and_then(|p| p.as_ident())
            .map(|i| i.value.to_ascii_lowercase());
        if let Some(n) = name.filter(|n| {
            matches!(
                n.as_str(),
                "standard_conforming_strings" | "backslash_quote"
            )
        }) {
            return Some(format!(
                "it sets `{n}`, which changes how the engine reads the quotes of the statements after it, and ripple reads them with the defaults; take it out of the job (the defaults read the same text)"
            ));
        }
    }
    // `COPY ... TO/FROM PROGRAM` runs a shell command on the server: in
    // every task and re-run, before any swap, whatever it writes to.
    if let Statement::Copy {
        target: sqlparser::ast::CopyTarget::Program { command },
        ..
    } = stmt
    {
        return Some(format!(
            "it runs the program {command:?} on the database server (`COPY ... PROGRAM`) as soon as the task runs, before any swap: what the program does reaches production; export or load with a step of its own outside the backfill"
        ));
    }
    let writes = |parts: &[String]| parts.last().is_some_and(|n| writes_beyond_tables(n));
    // A sequence moves when drawn and never moves back: a task drawing
    // production's (a job's `nextval('mart.s')`, a scratch table's default)
    // leaves production changed before any swap, the plan refused or not.
    let draws = |parts: &[String]| parts.last().is_some_and(|n| n == "nextval");
    if let Some(call) = first_call(stmt, draws) {
        return Some(format!(
            "it calls `{call}`, which draws a sequence (production's, as the job names it) as soon as the task runs, before any swap, and a drawn sequence never moves back; number the rows another way (`row_number()`), or restate this table outside the backfill"
        ));
    }
    if let Some(call) = first_call(stmt, writes) {
        return Some(format!(
            "it calls `{call}`, which changes the database beyond tables (a sequence, a setting, a large object, another session or server) as soon as the task runs, before any swap; do that outside the backfill"
        ));
    }
    struct Locks(bool);
    impl sqlparser::ast::Visitor for Locks {
        type Break = ();
        fn pre_visit_query(&mut self, q: &sqlparser::ast::Query) -> ControlFlow<()> {
            if q.locks.is_empty() {
                ControlFlow::Continue(())
            } else {
                self.0 = true;
                ControlFlow::Break(())
            }
        }
    }
    let mut locks = Locks(false);
    let _ = sqlparser::ast::Visit::visit(stmt, &mut locks);
    locks.0.then(|| {
        "it locks the rows it reads (`FOR UPDATE` / `FOR SHARE`): production's own writers would wait on the backfill; remove the locking clause".to_string()
    })
}

/// Whether ripple knows every relation `stmt` can change: queries, DML and
/// the DDL of tables and views (checked relation by relation), and session
/// statements. Anything else — `CALL`, `CREATE FUNCTION`, `ALTER SCHEMA`,
/// `DROP FUNCTION`, `EXECUTE` — may change anything.
fn checkable(stmt: &Statement) -> bool {
    use Statement as S;
    match stmt {
        S::Drop { object_type, .. } => holds_relation(*object_type),
        S::CreateSchema { if_not_exists, .. } => *if_not_exists,
        S::Query(_)
        | S::Insert(_)
        | S::CreateTable(_)
        | S::CreateView(_)
        | S::CreateIndex(_)
        | S::Merge(_)
        | S::Update(_)
        | S::Delete(_)
        | S::Copy { .. }
        | S::CopyIntoSnowflake { .. }
        | S::Truncate(_)
        | S::AlterTable(_)
        | S::AlterView(_)
        | S::Comment { .. }
        | S::Grant(_)
        | S::Revoke(_)
        | S::RenameTable(_)
        | S::Set(_)
        | S::Use(_)
        | S::StartTransaction { .. }
        | S::Commit { .. }
        | S::Rollback { .. }
        | S::Savepoint { .. }
        | S::ReleaseSavepoint { .. }
        | S::AlterSession { .. }
        | S::Explain { .. }
        | S::Reset(_)
        | S::Discard { .. }
        | S::Analyze(_) => true,
        _ => false,
    }
}

/// An identifier as ripple prints it (`"Order Date"`, `"a""b"`), back to
/// the name itself; a plain name as is.
pub fn unquote_ident(s: &str) -> String {
    match s.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(inner) => inner.replace("\"\"", "\""),
        None => s.to_string(),
    }
}

/// The redirected new name of `ALTER TABLE old RENAME TO new`, when the
/// relation it denotes is redirected; an error when the redirect cannot be
/// written as a rename (the replacement lives in another schema).
fn rename_target(
    old: Option<&str>,
    new: &ObjectName,
    dialect: SqlDialect,
    map: &HashMap<String, String>,
) -> Result<Option<ObjectName>, String> {
    let Some(full) = qualified_like(old, new, dialect) else {
        return Ok(None);
    };
    let Some(replacement) = map.get(&full) else {
        return Ok(None);
    };
    if new.0.len() > 1 {
        return Ok(Some(object_name(dialect, replacement)));
    }
    let (mut from, mut to) = (relation_parts(&full), relation_parts(replacement));
    from.pop();
    let last = to.pop().unwrap_or_default();
    let old_schema: Vec<String> = old
        .map(relation_parts)
        .map(|mut p| {
            p.pop();
            p
        })
        .unwrap_or_default();
    // The renamed table itself is redirected too, so the rename happens in
    // the schema of its replacement; that must be the new name's schema.
    let old_replacement_schema = old
        .and_then(|o| map.get(o))
        .map(|r| {
            let mut p = relation_parts(r);
            p.pop();
            p
        })
        .unwrap_or(old_schema);
    if old_replacement_schema != to {
        return Err(format!(
            "`ALTER TABLE ... RENAME TO {}` cannot be redirected to `{replacement}` (another schema than the renamed table's); write the job with CREATE TABLE ... AS instead",
            from.join(".")
        ));
    }
    Ok(Some(ObjectName(vec![ObjectNamePart::Identifier(quoted(
        dialect, &last,
    ))])))
}

/// The tables of a `GRANT`/`REVOKE ... ON`, redirected; grants on whole
/// schemas are opaque.
fn grant_objects(
    objects: &mut Option<GrantObjects>,
    named: &mut BTreeSet<String>,
    opaque: &mut Option<String>,
    dialect: SqlDialect,
    swap: &impl Fn(&mut ObjectName),
) {
    match objects {
        Some(GrantObjects::Tables(names) | GrantObjects::Views(names)) => {
            for n in names.iter_mut() {
                swap(n);
                named.extend(relation_name(n, dialect));
            }
        }
        None => {}
        Some(other) => {
            *opaque = Some(format!(
                "ripple cannot tell which tables a grant on `{other}` changes"
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shadows() -> HashMap<String, String> {
        [
            ("mart.daily".to_string(), "mart.daily__backfill".to_string()),
            (
                "mart.events".to_string(),
                "mart.events__backfill".to_string(),
            ),
        ]
        .into()
    }

    fn run(sql: &str) -> Vec<Rewritten> {
        redirect(sql, SqlDialect::Postgres, &shadows()).unwrap()
    }

    #[test]
    fn identifiers_are_quoted_per_dialect_and_cannot_inject() {
        assert_eq!(
            quote_ident(SqlDialect::Postgres, "a\"; drop table x; --"),
            "\"a\"\"; drop table x; --\""
        );
        assert_eq!(quote_ident(SqlDialect::BigQuery, "a`b"), "`a``b`");
        assert_eq!(quote_ident(SqlDialect::MsSql, "a]b"), "[a]]b]");
        assert_eq!(
            quote_relation(SqlDialect::Snowflake, "db.s.\"x.y\""),
            "\"DB\".\"S\".\"x.y\""
        );
        // Upper-folding engines: a plain name is the upper-case table.
        assert_eq!(
            quote_ident(SqlDialect::Oracle, "orders_1$"),
            "\"ORDERS_1$\""
        );
        assert_eq!(quote_ident(SqlDialect::Snowflake, "Orders"), "\"Orders\"");
    }

    #[test]
    fn reads_and_writes_are_redirected() {
        let out = run(
            "insert into mart.daily select d, count(*) from mart.events join raw.users using (id) group by d",
        );
        assert_eq!(
            out[0].sql,
            "INSERT INTO \"mart\".\"daily__backfill\" SELECT d, count(*) FROM \"mart\".\"events__backfill\" JOIN raw.users USING(id) GROUP BY d"
        );
        assert_eq!(
            out[0].changes,
            BTreeSet::from(["mart.daily__backfill".to_string()])
        );
    }

    #[test]
    fn like_and_clone_follow_the_redirected_table() {
        let out = run("create table mart.daily (like mart.events)");
        assert_eq!(
            out[0].sql,
            "CREATE TABLE \"mart\".\"daily__backfill\" (LIKE \"mart\".\"events__backfill\")"
        );
        let snow = redirect(
            "create table mart.daily clone mart.events",
            SqlDialect::Snowflake,
            &shadows(),
        )
        .unwrap();
        assert!(
            snow[0].sql.contains("CLONE \"MART\".\"EVENTS__BACKFILL\""),
            "{}",
            snow[0].sql
        );
    }

    #[test]
    fn loads_are_redirected_and_exports_change_their_files() {
        let out = run("copy mart.daily from 's3://lake/daily/'; copy mart.events to '/tmp/e.csv'");
        assert_eq!(
            out[0].sql,
            "COPY \"mart\".\"daily__backfill\" FROM 's3://lake/daily/'"
        );
        assert_eq!(
            out[0].changes,
            BTreeSet::from(["mart.daily__backfill".to_string()])
        );
        assert_eq!(out[1].changes, BTreeSet::from(["/tmp/e.csv".to_string()]));
        let snow = redirect(
            "copy into mart.daily from @landing/daily/; copy into @out/daily/ from mart.daily",
            SqlDialect::Snowflake,
            &shadows(),
        )
        .unwrap();
        assert_eq!(
            snow[0].changes,
            BTreeSet::from(["mart.daily__backfill".to_string()])
        );
        assert_eq!(snow[1].changes, BTreeSet::from(["@out/daily/".to_string()]));
    }

    #[test]
    fn ddl_names_are_redirected_and_reported() {
        let out = run(
            "drop table if exists mart.daily; create table mart.daily as select 1 as x; \
             truncate table mart.daily; alter table mart.daily add column y int; \
             create index i on mart.daily (x); comment on table mart.daily is 'x'; \
             grant select on mart.daily to reader; drop table raw.users",
        );
        for r in &out[..out.len() - 1] {
            assert!(
                !r.sql.contains("\"daily\"") && !r.sql.contains(" mart.daily "),
                "{}",
                r.sql
            );
            assert_eq!(
                r.changes,
                BTreeSet::from(["mart.daily__backfill".to_string()]),
                "{}",
                r.sql
            );
            assert_eq!(r.opaque, None);
        }
        assert_eq!(
            out.last().unwrap().changes,
            BTreeSet::from(["raw.users".to_string()])
        );
    }

    #[test]
    fn renames_stay_beside_the_redirected_table_or_are_opaque() {
        let map: HashMap<String, String> = [
            ("mart.daily".to_string(), "mart.daily__backfill".to_string()),
            (
                "mart.daily_new".to_string(),
                "mart.daily_new__backfill".to_string(),
            ),
        ]
        .into();
        let out = redirect(
            "alter table mart.daily_new rename to daily",
            SqlDialect::Postgres,
            &map,
        )
        .unwrap();
        assert_eq!(
            out[0].sql,
            "ALTER TABLE \"mart\".\"daily_new__backfill\" RENAME TO \"daily__backfill\""
        );
        assert!(out[0].changes.contains("mart.daily__backfill"));
        let elsewhere: HashMap<String, String> =
            [("mart.daily".to_string(), "shadow.daily".to_string())].into();
        let out = redirect(
            "alter table mart.tmp rename to daily",
            SqlDialect::Postgres,
            &elsewhere,
        )
        .unwrap();
        assert!(out[0].opaque.is_some());
        assert!(out[0].changes.contains("mart.daily"));
    }

    #[test]
    fn statements_of_unknown_effect_are_opaque() {
        for sql in [
            "call mart.cleanup()",
            "create or replace function mart.f() returns int as 'select 1' language sql",
            "alter schema raw rename to raw_old",
            "drop function mart.f",
            "create schema mart",
        ] {
            assert!(run(sql)[0].opaque.is_some(), "{sql}");
        }
        assert!(run("create schema if not exists stage")[0].opaque.is_none());
        assert_eq!(unquote_ident("\"Order Date\""), "Order Date");
        assert_eq!(unquote_ident("\"a\"\"b\""), "a\"b");
        assert_eq!(unquote_ident("order_date"), "order_date");
    }

    #[test]
    fn a_table_attached_to_another_changes_it() {
        for sql in [
            "create table stage.p partition of mart.parent for values from ('2030-01-01') to ('2030-02-01')",
            "create table stage.c (x int) inherits (mart.parent)",
        ] {
            assert!(run(sql)[0].changes.contains("mart.parent"), "{sql}");
        }
    }

    #[test]
    fn role_switches_and_row_locks_are_opaque() {
        for sql in [
            "set role prod_owner",
            "set session authorization admin",
            "set local role prod_owner",
            "set session_authorization = 'admin'",
            "set \"role\" = 'x'",
            "set \"session_authorization\" to 'x'",
            "set standard_conforming_strings = off",
            "set local backslash_quote to on",
            "select * from mart.orders for update",
            "insert into mart.daily select * from (select * from raw.orders for share) s",
        ] {
            assert!(run(sql)[0].opaque.is_some(), "{sql}");
        }
        for sql in [
            "set search_path to mart",
            "set statement_timeout = 0",
            // Back to the role the plan runs as (the login's): no switch.
            "reset role",
            "reset session authorization",
        ] {
            assert!(run(sql)[0].opaque.is_none(), "{sql}");
        }
    }

    #[test]
    fn built_ins_that_change_more_than_tables_are_opaque() {
        for sql in [
            "select setval('mart.daily_id_seq', coalesce((select max(id) from mart.daily), 1))",
            "select pg_catalog.setval('s', 1)",
            "insert into mart.t select pg_notify('c', 'x')",
            "select dblink_exec('host=prod', 'delete from t')",
            "select lo_unlink(42)",
            "select pg_terminate_backend(pid) from pg_stat_activity",
            "select set_config('search_path', 'evil', false)",
            // Drawing a sequence moves production's, there and then.
            "insert into mart.t select nextval('mart.s'), x from raw.r",
            "create temp table st (id bigint default nextval('mart.s'), x int)",
            "insert into mart.t (id) values (pg_catalog.nextval('mart.s'::regclass))",
            // Table functions in FROM are calls too (round 26).
            "insert into mart.t select o.x, b.id from raw.orders o, nextval('ops.load_id') as b(id)",
            "insert into mart.t select o.x from raw.orders o cross join lateral setval('mart.seq', 1) s",
            "insert into mart.t select o.x from raw.orders o, dblink_exec('host=prod', 'delete from raw.orders') s",
            "insert into mart.t select o.x from raw.orders o, pg_advisory_lock(1) s",
            "insert into mart.t select * from dblink('host=prod', 'delete from raw.orders returning 1') as x(d date, n bigint)",
            // Families: locks tried, statistics, replication, promotion.
            "select pg_try_advisory_lock(1)",
            "select pg_stat_reset()",
            "select pg_create_logical_replication_slot('s', 'test_decoding')",
            "select pg_drop_replication_slot('s')",
            "select * from pg_logical_slot_get_changes('s', null, null)",
            "select pg_promote()",
            // A program on the server, either way.
            "copy (select * from mart.daily) to program 'cat > /srv/export.csv'",
            "copy raw.st from program 'curl -X POST http://hook/deploy'",
        ] {
            assert!(run(sql)[0].opaque.is_some(), "{sql}");
        }
        let copy = run("copy (select 1) to program 'x'")[0]
            .opaque
            .clone()
            .unwrap();
        assert!(copy.contains("runs the program"), "{copy}");
        for sql in [
            "select now(), random(), md5('x'), currval('mart.s')",
            "insert into mart.t select * from raw.r, generate_series(1, 3) g(i)",
            "insert into mart.t select * from raw.r cross join lateral unnest(r.a) u(x)",
        ] {
            assert!(run(sql)[0].opaque.is_none(), "{sql}");
        }
    }

    #[test]
    fn schema_wide_statements_are_opaque() {
        assert!(run("drop schema mart cascade")[0].opaque.is_some());
        assert!(
            run("grant select on all tables in schema mart to r")[0]
                .opaque
                .is_some()
        );
    }
}
