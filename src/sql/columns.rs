//! Column lineage of one SELECT-shaped statement: each output column and the
//! upstream columns it is computed from, through CTEs, subqueries, aliases and
//! `*`, plus the columns that decide *which rows* come out (filters, joins,
//! grouping), since a change there touches every output column.
//!
//! Resolution is by scope, as SQL does it: a FROM clause makes a list of
//! sources (tables, CTEs, derived tables), each with the columns it is known
//! to have. A table's columns are known only when the caller passes them
//! (from YAML or an upstream model); otherwise a reference resolves to the
//! table by name and `*` over it is reported as not expanded.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::ControlFlow;
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use sqlparser::ast::{
    Expr, GroupByExpr, Ident, JoinConstraint, JoinOperator, OrderByKind, Query, Select, SelectItem,
    SelectItemQualifiedWildcardKind, SetExpr, Statement, TableAlias, TableFactor, TableWithJoins,
    Visit, VisitMut, Visitor, VisitorMut,
};

use super::canonical::fold_ident;
use super::dialect::SqlDialect;
use super::names::{ident_name, relation_name};

/// Columns known per relation name, in order (from YAML or upstream models).
pub type KnownColumns = BTreeMap<String, Vec<String>>;

/// One upstream column: `relation.column` (`column` is `*` for a star that
/// could not be expanded).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ColumnRef {
    /// The upstream relation, as statement lineage names it.
    pub relation: String,
    /// The column in it.
    pub column: String,
}

/// One output column and what it is computed from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputColumn {
    /// Its name as the statement outputs it.
    pub name: String,
    /// The upstream columns its value reads.
    pub sources: BTreeSet<ColumnRef>,
    /// Its expression with every column reference replaced by what it
    /// denotes upstream (through CTEs and subqueries), identifiers folded:
    /// equal fingerprints compute the same value, whatever the aliases.
    #[serde(skip)]
    pub fingerprint: String,
}

/// The column lineage of a statement.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnLineage {
    /// Output columns in order.
    pub columns: Vec<OutputColumn>,
    /// Upstream columns used by filters, joins, grouping anywhere in the
    /// statement: they decide which rows every output column has.
    pub conditions: BTreeSet<ColumnRef>,
    /// Relations selected with `*` whose columns are not known: every
    /// column of theirs is possibly used.
    pub unexpanded_stars: BTreeSet<String>,
    /// Fingerprints (see [`OutputColumn::fingerprint`]) of everything that
    /// decides which rows come out: filters, join kinds and conditions,
    /// grouping, `DISTINCT`, set operators, limits.
    #[serde(skip)]
    pub row_fingerprints: BTreeSet<String>,
    /// Unqualified columns that two or more tables of unknown columns could
    /// hold, with every candidate (`relation.column`): each candidate is
    /// among the sources, and a schema (`--schema`, declared columns)
    /// would settle which one it is.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ambiguous: BTreeMap<String, Vec<String>>,
    /// An `INSERT` without a column list into a table whose columns are not
    /// known: its values go by position, so the output names above are the
    /// SELECT's, not the table's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub positional: bool,
}

/// The column lineage of a statement that produces rows (a query, `INSERT
/// ... SELECT`, `CREATE TABLE AS`, `CREATE VIEW`); `None` for the rest.
pub fn column_lineage(
    statement: &Statement,
    dialect: SqlDialect,
    known: &KnownColumns,
) -> Option<ColumnLineage> {
    column_lineage_with(statement, dialect, known, true)
}

/// [`column_lineage`], with or without the fingerprints (which print
/// every expression: most of the cost when only the edges are wanted).
pub(crate) fn column_lineage_with(
    statement: &Statement,
    dialect: SqlDialect,
    known: &KnownColumns,
    fingerprints: bool,
) -> Option<ColumnLineage> {
    let mut r = Resolver {
        dialect,
        known,
        fingerprints,
        ctes: Vec::new(),
        conditions: BTreeSet::new(),
        stars: BTreeSet::new(),
        row_prints: BTreeSet::new(),
        ambiguous: BTreeMap::new(),
        positional: false,
        body_scope: Vec::new(),
        star_budget: STAR_BUDGET,
        bases: HashMap::new(),
        coarsened: HashMap::new(),
    };
    let columns = r.statement(statement)?;
    Some(ColumnLineage {
        columns,
        conditions: r.conditions,
        unexpanded_stars: r.stars,
        row_fingerprints: r.row_prints,
        ambiguous: r
            .ambiguous
            .into_iter()
            .map(|(c, rels)| (c, rels.into_iter().collect()))
            .collect(),
        positional: r.positional,
    })
}

/// A relation visible in a scope.
#[derive(Debug, Clone)]
struct Source {
    /// The name a column qualifier uses for it (alias, or the table's last part).
    alias: String,
    /// The relation name, for base tables.
    relation: Option<String>,
    /// Its columns when known; `None` for a table whose columns are not.
    /// Shared: every scope that sees a source would otherwise copy all its
    /// columns (most of column lineage's cost on CTE-heavy models).
    columns: Option<Rc<Vec<OutputColumn>>>,
    /// From an enclosing query: an unqualified name reaches it only when no
    /// source of the query itself could hold it.
    outer: bool,
    /// Columns an unqualified `*` leaves out: `USING (c)` outputs one `c`,
    /// the left side's.
    hidden: Vec<String>,
}

/// The sources a query's expressions see: its own, then the enclosing ones.
fn visible(scope: &[Source], outer: &[Source]) -> Vec<Source> {
    let mut v = scope.to_vec();
    v.extend(outer.iter().map(|s| Source {
        outer: true,
        ..s.clone()
    }));
    v
}

struct Resolver<'a> {
    dialect: SqlDialect,
    /// Whether expressions are printed into fingerprints.
    fingerprints: bool,
    known: &'a KnownColumns,
    /// Visible CTEs, innermost last.
    ctes: Vec<(String, Rc<Vec<OutputColumn>>)>,
    conditions: BTreeSet<ColumnRef>,
    stars: BTreeSet<String>,
    row_prints: BTreeSet<String>,
    /// Unqualified column → the `relation.column`s it could be.
    ambiguous: BTreeMap<String, BTreeSet<String>>,
    /// An insert without a column list met a table of unknown columns.
    positional: bool,
    /// The FROM scope of the last SELECT read: what its query's ORDER BY
    /// may name besides the outputs (`order by amt desc limit 10`).
    body_scope: Vec<Source>,
    /// Column references `*` may still copy in this statement (see
    /// [`STAR_BUDGET`]).
    star_budget: usize,
    /// Known base tables' columns, by relation (see [`Resolver::base_columns`]).
    bases: HashMap<String, Rc<Vec<OutputColumn>>>,
    /// What a source's columns read, coarsened, by the columns' address
    /// (the `Rc` kept so that the address is not reused): a union of 4,000
    /// `select *` over a 100,000-column table coarsened all its columns in
    /// every branch once the budget was spent (past 60 s).
    coarsened: HashMap<*const Vec<OutputColumn>, Coarsened>,
}

/// A source's columns, kept, and what they read coarsened.
type Coarsened = (Rc<Vec<OutputColumn>>, BTreeSet<ColumnRef>);

impl Resolver<'_> {
    /// The output columns of a statement that produces rows or changes
    /// them; `None` for the rest.
    fn statement(&mut self, statement: &Statement) -> Option<Vec<OutputColumn>> {
        let dialect = self.dialect;
        let names = |cols: &[sqlparser::ast::ObjectName]| -> Vec<String> {
            cols.iter()
                .filter_map(|c| c.0.last()?.as_ident().map(|id| ident_name(id, dialect)))
                .collect()
        };
        match statement {
            // `WITH c AS (...) INSERT | UPDATE | MERGE ...`: the CTEs scope
            // over the data-modifying statement.
            Statement::Query(q) => match &*q.body {
                SetExpr::Insert(inner) | SetExpr::Update(inner) | SetExpr::Merge(inner) => {
                    let depth = self.ctes.len();
                    self.with_ctes(q, &[]);
                    let out = self.statement(inner);
                    self.ctes.truncate(depth);
                    out
                }
                _ => Some(self.query(q, &[])),
            },
            Statement::Insert(i) => {
                let mut cols = self.query(i.source.as_deref()?, &[]);
                // `ON CONFLICT ... DO UPDATE SET ... WHERE ...`, `DO
                // NOTHING`, `ON DUPLICATE KEY UPDATE`: which rows stay and
                // what they hold.
                if let Some(on) = &i.on {
                    self.row_prints.insert(bounded(format!("on insert:{on}")));
                }
                if i.by_name {
                    // `INSERT INTO t BY NAME SELECT ...` (DuckDB): the
                    // SELECT's names are the table's columns.
                } else if i.columns.is_empty() {
                    // No column list: the values go by position into the
                    // table's own columns, whatever the SELECT calls them.
                    let table = match &i.table {
                        sqlparser::ast::TableObject::TableName(n) => {
                            super::names::relation_name(n, dialect)
                        }
                        _ => None,
                    };
                    match table.and_then(|t| self.known.get(&t)) {
                        Some(known) => rename_columns(&mut cols, known),
                        None => self.positional = true,
                    }
                } else {
                    rename_columns(&mut cols, &names(&i.columns));
                }
                Some(cols)
            }
            Statement::CreateTable(ct) => Some(self.query(ct.query.as_deref()?, &[])),
            // A procedure of one statement that makes rows: that statement's.
            Statement::CreateProcedure { body, .. } => {
                let statements = match body {
                    sqlparser::ast::CreateProcedureBody::As(b) => b.statements(),
                    sqlparser::ast::CreateProcedureBody::BeginAtomic(b) => &b.statements,
                };
                match statements.as_slice() {
                    [only] => self.statement(only),
                    _ => None,
                }
            }
            Statement::CreateView(cv) => {
                let mut cols = self.query(&cv.query, &[]);
                let rename: Vec<String> = cv
                    .columns
                    .iter()
                    .map(|c| ident_name(&c.name, self.dialect))
                    .collect();
                rename_columns(&mut cols, &rename);
                Some(cols)
            }
            Statement::Update(u) => {
                let mut scope = Vec::new();
                self.from(&u.table, &[], &mut scope);
                let from = match &u.from {
                    Some(sqlparser::ast::UpdateTableFromKind::BeforeSet(t))
                    | Some(sqlparser::ast::UpdateTableFromKind::AfterSet(t)) => t.as_slice(),
                    None => &[],
                };
                for twj in from {
                    self.from(twj, &[], &mut scope);
                }
                let visible = visible(&scope, &[]);
                if let Some(cond) = &u.selection {
                    let refs = self.refs(cond, &visible);
                    self.conditions.extend(refs);
                    let print = format!("where:{}", self.print(cond, &visible));
                    self.row_prints.insert(print);
                }
                Some(self.assignments(&u.assignments, &visible))
            }
            Statement::Merge(m) => {
                let mut scope = Vec::new();
                self.factor(&m.table, &[], &mut scope);
                self.factor(&m.source, &[], &mut scope);
                let visible = visible(&scope, &[]);
                let on = self.refs(&*m.on, &visible);
                self.conditions.extend(on);
                let print = format!("merge on:{}", self.print(&m.on, &visible));
                self.row_prints.insert(print);
                let mut out: Vec<OutputColumn> = Vec::new();
                for (k, clause) in m.clauses.iter().enumerate() {
                    // Each clause (in order: the first that matches acts)
                    // decides which rows are changed, kept or deleted.
                    let predicate = clause
                        .predicate
                        .as_ref()
                        .map(|p| self.print(p, &visible))
                        .unwrap_or_default();
                    let action = match &clause.action {
                        sqlparser::ast::MergeAction::Update(_) => "update",
                        sqlparser::ast::MergeAction::Insert(_) => "insert",
                        sqlparser::ast::MergeAction::Delete { .. } => "delete",
                        sqlparser::ast::MergeAction::DoNothing { .. } => "nothing",
                    };
                    self.row_prints.insert(bounded(format!(
                        "merge when {k}:{}:{predicate}:{action}",
                        clause.clause_kind
                    )));
                    if let Some(p) = &clause.predicate {
                        let refs = self.refs(p, &visible);
                        self.conditions.extend(refs);
                    }
                    let cols = match &clause.action {
                        sqlparser::ast::MergeAction::Update(u) => match &u.kind {
                            sqlparser::ast::MergeUpdateKind::Set(a) => {
                                self.assignments(a, &visible)
                            }
                            _ => Vec::new(),
                        },
                        sqlparser::ast::MergeAction::Insert(i) => match &i.kind {
                            sqlparser::ast::MergeInsertKind::Values(v) => {
                                let row =
                                    v.rows.first().map(|r| r.content.as_slice()).unwrap_or(&[]);
                                names(&i.columns)
                                    .into_iter()
                                    .zip(row)
                                    .map(|(name, e)| OutputColumn {
                                        name,
                                        sources: self.refs(e, &visible),
                                        fingerprint: self.print(e, &visible),
                                    })
                                    .collect()
                            }
                            _ => Vec::new(),
                        },
                        _ => Vec::new(),
                    };
                    // A column set by several clauses reads what each reads.
                    for c in cols {
                        match out.iter_mut().find(|o| o.name == c.name) {
                            Some(o) => {
                                o.sources.extend(c.sources);
                                o.fingerprint =
                                    bounded(format!("{} | {}", o.fingerprint, c.fingerprint));
                            }
                            None => out.push(c),
                        }
                    }
                }
                Some(out)
            }
            _ => None,
        }
    }

    /// `SET a = x, b = y`: the columns set and what each reads.
    fn assignments(
        &mut self,
        assignments: &[sqlparser::ast::Assignment],
        visible: &[Source],
    ) -> Vec<OutputColumn> {
        let mut out = Vec::new();
        for a in assignments {
            let targets = match &a.target {
                sqlparser::ast::AssignmentTarget::ColumnName(n) => std::slice::from_ref(n),
                sqlparser::ast::AssignmentTarget::Tuple(ns) => ns.as_slice(),
            };
            let sources = self.refs(&a.value, visible);
            let fingerprint = self.print(&a.value, visible);
            for t in targets {
                if let Some(id) = t.0.last().and_then(|p| p.as_ident()) {
                    out.push(OutputColumn {
                        name: ident_name(id, self.dialect),
                        sources: sources.clone(),
                        fingerprint: fingerprint.clone(),
                    });
                }
            }
        }
        out
    }

    /// Registers the CTEs of `q` (in order: each sees those before it).
    fn with_ctes(&mut self, q: &Query, outer: &[Source]) {
        if let Some(with) = &q.with {
            for cte in &with.cte_tables {
                let mut cols = self.query(&cte.query, outer);
                self.rename_by_alias(&mut cols, &cte.alias);
                let name = ident_name(&cte.alias.name, self.dialect);
                self.ctes.push((name, Rc::new(cols)));
            }
        }
    }

    fn query(&mut self, q: &Query, outer: &[Source]) -> Vec<OutputColumn> {
        let depth = self.ctes.len();
        self.with_ctes(q, outer);
        let out = self.set_expr(&q.body, outer);
        let body_scope = match &*q.body {
            SetExpr::Select(_) => std::mem::take(&mut self.body_scope),
            _ => Vec::new(),
        };
        // `DISTINCT ON (k) ... ORDER BY k, ts`: the order picks the row kept.
        let distinct_on = matches!(&*q.body, SetExpr::Select(s)
            if matches!(s.distinct, Some(sqlparser::ast::Distinct::On(_))));
        if q.limit_clause.is_some() || q.fetch.is_some() || distinct_on {
            // Which rows a limit keeps depends on the order.
            let limit = q.limit_clause.as_ref().map(ToString::to_string);
            let fetch = q.fetch.as_ref().map(ToString::to_string);
            let mut print = format!("limit:{limit:?}{fetch:?} distinct on:{distinct_on}");
            // ORDER BY sees the output columns (the FROM scope is the body's).
            let outputs = [Source {
                alias: String::new(),
                relation: None,
                columns: Some(Rc::new(out.clone())),
                outer: false,
                hidden: Vec::new(),
            }];
            if let Some(OrderByKind::Expressions(exprs)) = q.order_by.as_ref().map(|o| &o.kind) {
                for o in exprs {
                    let by = match output_position(&o.expr).and_then(|n| out.get(n)) {
                        Some(col) => {
                            self.conditions.extend(col.sources.iter().cloned());
                            col.fingerprint.clone()
                        }
                        None => {
                            // An output's name, else a column of the FROM
                            // scope (`order by amt` of an unselected `amt`).
                            let mut refs = self.refs(&o.expr, &outputs);
                            let mut scope: &[Source] = &outputs;
                            if refs.is_empty() && !body_scope.is_empty() {
                                refs = self.refs(&o.expr, &body_scope);
                                scope = &body_scope;
                            }
                            self.conditions.extend(refs);
                            self.print(&o.expr, scope)
                        }
                    };
                    print.push_str(&format!(" by {by} {}", o.options));
                }
            }
            self.row_prints.insert(print);
        }
        self.ctes.truncate(depth);
        out
    }

    fn set_expr(&mut self, body: &SetExpr, outer: &[Source]) -> Vec<OutputColumn> {
        match body {
            SetExpr::Select(s) => self.select(s, outer),
            SetExpr::Query(q) => self.query(q, outer),
            SetExpr::SetOperation {
                left,
                right,
                op,
                set_quantifier,
            } => {
                let mut l = self.set_expr(left, outer);
                let r = self.set_expr(right, outer);
                self.row_prints.insert(format!("set:{op} {set_quantifier}"));
                // `UNION` (not `ALL`), `INTERSECT`, `EXCEPT` compare whole
                // rows: every column decides which rows come out.
                let keeps_all = matches!(op, sqlparser::ast::SetOperator::Union)
                    && matches!(
                        set_quantifier,
                        sqlparser::ast::SetQuantifier::All
                            | sqlparser::ast::SetQuantifier::AllByName
                    );
                if !keeps_all {
                    for c in l.iter().chain(&r) {
                        self.conditions.extend(c.sources.iter().cloned());
                    }
                }
                // `UNION [ALL] BY NAME` (DuckDB): columns pair up by name,
                // a name on one side only is a column of its own.
                let by_name = matches!(
                    set_quantifier,
                    sqlparser::ast::SetQuantifier::ByName
                        | sqlparser::ast::SetQuantifier::AllByName
                        | sqlparser::ast::SetQuantifier::DistinctByName
                );
                if by_name && !l.iter().chain(&r).any(is_collapsed) {
                    for b in r {
                        match l.iter_mut().find(|a| a.name.eq_ignore_ascii_case(&b.name)) {
                            Some(a) => {
                                a.sources.extend(b.sources);
                                a.fingerprint =
                                    bounded(format!("{} {op} {}", a.fingerprint, b.fingerprint));
                            }
                            None => l.push(b),
                        }
                    }
                    return l;
                }
                if l.len() != r.len() || l.iter().chain(&r).any(is_collapsed) {
                    // A collapsed `*` on either side: positions no longer
                    // line up, so every column reads what any column does.
                    let wide = l.len() + r.len() > MAX_STAR_COLUMNS;
                    // Moved, the smaller set into the larger: a chain of
                    // 3,000 unions over a collapsed 10,001-column `*`
                    // copied its 10,000 reads at every step (3.5 s).
                    let mut sources = BTreeSet::new();
                    for c in l.into_iter().chain(r) {
                        let mut more = c.sources;
                        if more.len() > sources.len() {
                            std::mem::swap(&mut sources, &mut more);
                        }
                        sources.extend(more);
                    }
                    let sources = if wide {
                        coarse(sources.iter())
                    } else {
                        sources
                    };
                    let mut out = Vec::new();
                    push_collapsed(&mut out, sources);
                    return out;
                }
                for (a, b) in l.iter_mut().zip(r) {
                    a.sources.extend(b.sources);
                    a.fingerprint = bounded(format!("{} {op} {}", a.fingerprint, b.fingerprint));
                }
                l
            }
            SetExpr::Values(v) => (1..=v.rows.first().map_or(0, |r| r.content.len()))
                .map(|i| OutputColumn {
                    name: format!("column{i}"),
                    sources: BTreeSet::new(),
                    fingerprint: format!("values:{i}:{v}"),
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    fn select(&mut self, s: &Select, outer: &[Source]) -> Vec<OutputColumn> {
        let mut scope = Vec::new();
        for twj in &s.from {
            self.from(twj, outer, &mut scope);
        }
        let visible = visible(&scope, outer);
        let clauses = [
            ("where", &s.selection),
            ("having", &s.having),
            ("qualify", &s.qualify),
        ];
        for (clause, cond) in clauses {
            if let Some(cond) = cond {
                let refs = self.refs(cond, &visible);
                self.conditions.extend(refs);
                let print = format!("{clause}:{}", self.print(cond, &visible));
                self.row_prints.insert(print);
            }
        }
        if let Some(d) = &s.distinct {
            self.row_prints.insert(format!("distinct:{d}"));
        }
        let refs = self.refs(&s.group_by, &visible);
        self.conditions.extend(refs);
        let mut out = Vec::new();
        for item in &s.projection {
            match item {
                SelectItem::UnnamedExpr(e) => out.push(OutputColumn {
                    name: self.expr_name(e),
                    sources: self.refs(e, &visible),
                    fingerprint: self.print(e, &visible),
                }),
                SelectItem::ExprWithAlias { expr, alias } => out.push(OutputColumn {
                    name: ident_name(alias, self.dialect),
                    sources: self.refs(expr, &visible),
                    fingerprint: self.print(expr, &visible),
                }),
                SelectItem::ExprWithAliases { expr, aliases } => {
                    let sources = self.refs(expr, &visible);
                    let fingerprint = self.print(expr, &visible);
                    for a in aliases {
                        out.push(OutputColumn {
                            name: ident_name(a, self.dialect),
                            sources: sources.clone(),
                            fingerprint: fingerprint.clone(),
                        });
                    }
                }
                SelectItem::Wildcard(_) => {
                    for src in &scope {
                        self.expand_star(src, &src.hidden, &mut out);
                    }
                }
                SelectItem::QualifiedWildcard(kind, _) => {
                    if let SelectItemQualifiedWildcardKind::ObjectName(name) = kind {
                        let q = relation_name(name, self.dialect).unwrap_or_default();
                        if let Some(src) = find_source(&scope, &q) {
                            self.expand_star(src, &[], &mut out);
                        }
                    }
                }
            }
        }
        // `GROUP BY 1` groups by the first output column's sources.
        match &s.group_by {
            GroupByExpr::Expressions(exprs, _) => {
                for e in exprs {
                    let print = match output_position(e).and_then(|n| out.get(n)) {
                        Some(col) => {
                            self.conditions.extend(col.sources.iter().cloned());
                            col.fingerprint.clone()
                        }
                        None => self.print(e, &visible),
                    };
                    self.row_prints.insert(format!("group:{print}"));
                }
            }
            GroupByExpr::All(_) => {
                self.row_prints.insert("group:all".to_string());
            }
        }
        self.body_scope = visible;
        out
    }

    /// Adds the sources of a FROM item (and its joins) to `scope`; join
    /// conditions go to the statement's conditions.
    fn from(&mut self, twj: &TableWithJoins, outer: &[Source], scope: &mut Vec<Source>) {
        self.factor(&twj.relation, outer, scope);
        if twj.joins.is_empty() {
            // No condition to see anything: copying what is visible for each
            // of 1,200 tables listed with commas was quadratic (25 s).
            return;
        }
        // What join conditions see, grown as sources join rather than rebuilt
        // per join (4,000 joins made that quadratic in copies of sources).
        let mut seen = visible(scope, outer);
        let mut local = scope.len();
        let mut left_cols: HashMap<String, LeftColumn> = HashMap::new();
        for join in &twj.joins {
            let left = scope.len();
            self.factor(&join.relation, outer, scope);
            for src in &scope[left..] {
                seen.insert(local, src.clone());
                local += 1;
            }
            let refs = self.refs(&join.join_operator, &seen);
            self.conditions.extend(refs);
            let on = match join_constraint(&join.join_operator) {
                Some(JoinConstraint::On(e)) => self.print(e, &seen),
                Some(JoinConstraint::Using(names)) => format!("using {names:?}"),
                Some(JoinConstraint::Natural) => "natural".to_string(),
                _ => String::new(),
            };
            let kind = join_kind(&join.join_operator);
            self.row_prints.insert(format!("join:{kind}:{on}"));
            // `NATURAL JOIN` compares every column the two sides share:
            // those, where both sides' columns are known; else every
            // column of both (any could be shared).
            if let Some(JoinConstraint::Natural) = join_constraint(&join.join_operator) {
                let (before, after) = scope.split_at(left);
                let names = |side: &[Source]| -> Option<BTreeSet<String>> {
                    let mut out = BTreeSet::new();
                    for src in side {
                        out.extend(src.columns.as_ref()?.iter().map(|c| c.name.clone()));
                    }
                    Some(out)
                };
                match (names(before), names(after)) {
                    (Some(l), Some(r)) if !l.contains("*") && !r.contains("*") => {
                        for column in l.intersection(&r) {
                            let cols = resolve(before, "", column);
                            self.conditions.extend(sources_of(&cols));
                            let cols = resolve(after, "", column);
                            self.conditions.extend(sources_of(&cols));
                        }
                    }
                    _ => {
                        for src in before.iter().chain(after) {
                            self.conditions.extend(sources_of(&whole_row(src)));
                        }
                    }
                }
            }
            if let Some(JoinConstraint::Using(names)) = join_constraint(&join.join_operator) {
                for name in names {
                    let Some(column) = name.0.last().and_then(|p| p.as_ident()) else {
                        continue;
                    };
                    let column = ident_name(column, self.dialect);
                    // `USING (c)` compares the joined-so-far side's `c` with
                    // the new side's, and outputs one `c`.
                    let (before, after) = scope.split_at_mut(left);
                    // The left side's `c`: the first source that has it, or
                    // else any of those whose columns are unknown. Each
                    // source is looked at once per column, as it joins: a
                    // chain of `using` joins would otherwise look at all of
                    // them again at every join (80,000 joins: 175 s).
                    let st = left_cols.entry(column.clone()).or_default();
                    let mut unknown = Vec::new();
                    for (i, src) in before.iter().enumerate().skip(st.checked) {
                        match &src.columns {
                            Some(cols) => {
                                if st.holder.is_none() && cols.iter().any(|c| c.name == column) {
                                    st.holder = Some(i);
                                }
                            }
                            None => {
                                st.unknown = true;
                                unknown.push(i);
                            }
                        }
                    }
                    st.checked = before.len();
                    let on_left = match st.holder {
                        Some(h) => {
                            if !st.holder_read {
                                st.holder_read = true;
                                let cols = resolve(&before[h..=h], "", &column);
                                self.conditions.extend(sources_of(&cols));
                            }
                            true
                        }
                        None if !st.unknown => {
                            // Only declared columns, none of them `c`: the
                            // declarations may be incomplete (see `resolve`).
                            let cols = resolve(before, "", &column);
                            self.conditions.extend(sources_of(&cols));
                            !cols.is_empty()
                        }
                        None => {
                            for i in unknown {
                                let cols = resolve(&before[i..=i], "", &column);
                                self.conditions.extend(sources_of(&cols));
                            }
                            true
                        }
                    };
                    let on_right = resolve(after, "", &column);
                    self.conditions.extend(sources_of(&on_right));
                    if on_left {
                        for src in after.iter_mut() {
                            src.hidden.push(column.clone());
                        }
                    }
                }
            }
        }
    }

    fn factor(&mut self, f: &TableFactor, outer: &[Source], scope: &mut Vec<Source>) {
        match f {
            TableFactor::Table {
                name, alias, args, ..
            } => {
                // `dblink('host=...', 'select ...')`, `read_csv('x.csv',
                // ...)`: what a table function is given decides its rows.
                if let Some(args) = args {
                    let seen = visible(scope, outer);
                    let refs = self.refs(f, &seen);
                    self.conditions.extend(refs);
                    let args: Vec<String> = args.args.iter().map(ToString::to_string).collect();
                    self.row_prints.insert(bounded(format!(
                        "from function:{name}({})",
                        args.join(", ")
                    )));
                }
                let Some(rel) = relation_name(name, self.dialect) else {
                    return;
                };
                let cte = self.ctes.iter().rev().find(|(n, _)| *n == rel);
                let (relation, mut columns) = match cte {
                    Some((_, cols)) => (None, Some(Rc::clone(cols))),
                    None => (Some(rel.clone()), self.base_columns(&rel)),
                };
                if let (Some(a), Some(cols)) = (alias, columns.as_mut())
                    && !a.columns.is_empty()
                {
                    self.rename_by_alias(Rc::make_mut(cols).as_mut_slice(), a);
                }
                let alias = alias.as_ref().map_or_else(
                    || rel.rsplit('.').next().unwrap_or(&rel).to_string(),
                    |a| ident_name(&a.name, self.dialect),
                );
                scope.push(Source {
                    alias,
                    relation,
                    columns,
                    outer: false,
                    hidden: Vec::new(),
                });
            }
            TableFactor::Derived {
                lateral,
                subquery,
                alias,
                ..
            } => {
                let seen = if *lateral {
                    visible(scope, outer)
                } else {
                    outer.to_vec()
                };
                let mut cols = self.query(subquery, &seen);
                if let Some(a) = alias {
                    self.rename_by_alias(&mut cols, a);
                }
                scope.push(Source {
                    alias: alias
                        .as_ref()
                        .map(|a| ident_name(&a.name, self.dialect))
                        .unwrap_or_default(),
                    relation: None,
                    columns: Some(Rc::new(cols)),
                    outer: false,
                    hidden: Vec::new(),
                });
            }
            TableFactor::NestedJoin {
                table_with_joins, ..
            } => self.from(table_with_joins, outer, scope),
            // Table functions, UNNEST, VALUES in FROM: columns of no table.
            // What they are given from the tables before them (`from up,
            // unnest(up.arr) u(x)`) decides how many rows come out, as a
            // join condition does (once left out of a diff's reach).
            _ => {
                let seen = visible(scope, outer);
                let refs = self.refs(f, &seen);
                self.conditions.extend(refs);
            }
        }
    }

    /// Appends the columns `*` stands for in `src`, but those `hidden`. Past
    /// [`MAX_STAR_COLUMNS`], or once the statement's stars have copied
    /// [`STAR_BUDGET`] references, the rest become one `*` column reading all
    /// of them: `select * from a join a b using (c)` chains double the column
    /// count per step (22 such models filled 24 GB), and a thousand CTEs each
    /// `select *` from a 10,000-column one copied 10M columns (7.4 GB).
    fn expand_star(&mut self, src: &Source, hidden: &[String], out: &mut Vec<OutputColumn>) {
        match (&src.columns, &src.relation) {
            (Some(cols), _) => {
                let shown = || cols.iter().filter(|c| !hidden.contains(&c.name));
                // Each shown column costs at least one: a source wider than
                // what is left is over without counting it.
                let cost = match cols.len().saturating_sub(hidden.len()) <= self.star_budget {
                    true => shown().map(|c| 1 + c.sources.len()).sum(),
                    false => usize::MAX,
                };
                let fits = cost <= self.star_budget;
                if fits && out.len() + cols.len() <= MAX_STAR_COLUMNS {
                    self.star_budget -= cost;
                    out.extend(shown().cloned());
                    return;
                }
                let sources = if fits {
                    self.star_budget -= cost;
                    shown().flat_map(|c| c.sources.iter().cloned()).collect()
                } else if hidden.is_empty() {
                    // Over budget: each upstream relation read at all, as
                    // `relation.*` (any of its columns), which is never short.
                    self.coarsened
                        .entry(Rc::as_ptr(cols))
                        .or_insert_with(|| {
                            (
                                cols.clone(),
                                coarse(cols.iter().flat_map(|c| c.sources.iter())),
                            )
                        })
                        .1
                        .clone()
                } else {
                    coarse(shown().flat_map(|c| c.sources.iter()))
                };
                push_collapsed(out, sources);
            }
            (None, Some(rel)) => {
                self.stars.insert(rel.clone());
                out.push(base_column(rel, "*"));
            }
            (None, None) => {}
        }
    }

    /// The columns of base table `rel` when known, made once per statement:
    /// a union of 2,000 `select * from t` over a 10,000-column `t` made 20M.
    fn base_columns(&mut self, rel: &str) -> Option<Rc<Vec<OutputColumn>>> {
        if let Some(cols) = self.bases.get(rel) {
            return Some(Rc::clone(cols));
        }
        let cols: Rc<Vec<OutputColumn>> = Rc::new(
            self.known
                .get(rel)?
                .iter()
                .map(|c| base_column(rel, c))
                .collect(),
        );
        self.bases.insert(rel.to_string(), Rc::clone(&cols));
        Some(cols)
    }

    fn rename_by_alias(&self, cols: &mut [OutputColumn], alias: &TableAlias) {
        let names: Vec<String> = alias
            .columns
            .iter()
            .map(|c| ident_name(&c.name, self.dialect))
            .collect();
        rename_columns(cols, &names);
    }

    /// The name an unaliased select item gets: the column's own name, or
    /// the expression as written.
    fn expr_name(&self, e: &Expr) -> String {
        match e {
            Expr::Identifier(id) => ident_name(id, self.dialect),
            Expr::CompoundIdentifier(parts) => parts
                .last()
                .map_or_else(String::new, |id| ident_name(id, self.dialect)),
            // PostgreSQL (and its kin) name a cast column after what it casts.
            Expr::Cast { expr, .. }
                if matches!(
                    self.dialect,
                    SqlDialect::Postgres
                        | SqlDialect::Redshift
                        | SqlDialect::Greenplum
                        | SqlDialect::Vertica
                        | SqlDialect::Materialize
                        | SqlDialect::Generic
                        | SqlDialect::Ansi
                ) && matches!(**expr, Expr::Identifier(_) | Expr::CompoundIdentifier(_)) =>
            {
                self.expr_name(expr)
            }
            other => other.to_string(),
        }
    }

    /// The upstream columns read by every expression in `node`; subqueries
    /// inside it are resolved in their own scope, with `visible` as outer.
    fn refs<V: Visit>(&mut self, node: &V, visible: &[Source]) -> BTreeSet<ColumnRef> {
        let mut c = Collect {
            depth: 0,
            names: Vec::new(),
            subqueries: Vec::new(),
        };
        let _ = node.visit(&mut c);
        let mut out = BTreeSet::new();
        for (qualifier, column) in c.names {
            let cols = resolve_ident(visible, &qualifier, &column, self.dialect);
            if qualifier.is_empty() {
                let name = ident_name(&column, self.dialect);
                if let Some(candidates) = ambiguity(visible, &name, &cols) {
                    self.ambiguous.entry(name).or_default().extend(candidates);
                }
            }
            out.extend(sources_of(&cols));
        }
        for sub in c.subqueries {
            for col in self.query(&sub, visible) {
                out.extend(col.sources);
            }
        }
        out
    }
}

impl Resolver<'_> {
    /// The fingerprint of `e` (see [`OutputColumn::fingerprint`]).
    fn print(&self, e: &Expr, visible: &[Source]) -> String {
        if !self.fingerprints {
            return String::new();
        }
        let mut e = e.clone();
        let mut s = Substitute {
            depth: 0,
            visible,
            dialect: self.dialect,
        };
        let _ = VisitMut::visit(&mut e, &mut s);
        bounded(e.to_string())
    }
}

/// What the left side of a chain of `using` joins holds of one column, as
/// far as its sources have been looked at (the left side only grows).
#[derive(Default)]
struct LeftColumn {
    /// Sources looked at so far.
    checked: usize,
    /// The first of them whose known columns hold it.
    holder: Option<usize>,
    /// Whether the holder's column is among the conditions yet.
    holder_read: bool,
    /// Whether any of them has unknown columns.
    unknown: bool,
}

/// Columns one `*` expands to, at most (see [`Resolver::expand_star`]).
const MAX_STAR_COLUMNS: usize = 10_000;
/// Column references (a column, or one of its sources) the stars of one
/// statement copy at most before collapsing: about 200 MB.
const STAR_BUDGET: usize = 500_000;
/// The fingerprint of the `*` column that stands for too many columns.
const TOO_MANY: &str = "*:too-many-columns";

/// Whether `c` is the `*` column standing for too many columns.
fn is_collapsed(c: &OutputColumn) -> bool {
    c.name == "*" && c.fingerprint == TOO_MANY
}

/// Adds `sources` to the collapsed `*` column of `out`, made if missing.
fn push_collapsed(out: &mut Vec<OutputColumn>, sources: BTreeSet<ColumnRef>) {
    match out.iter_mut().find(|c| is_collapsed(c)) {
        Some(star) => star.sources.extend(sources),
        None => out.push(OutputColumn {
            name: "*".to_string(),
            sources,
            fingerprint: TOO_MANY.to_string(),
        }),
    }
}

/// `relation.*` for each relation `refs` name: what they read, coarsened.
fn coarse<'r>(refs: impl Iterator<Item = &'r ColumnRef>) -> BTreeSet<ColumnRef> {
    let relations: BTreeSet<&str> = refs.map(|r| r.relation.as_str()).collect();
    relations
        .into_iter()
        .map(|relation| ColumnRef {
            relation: relation.to_string(),
            column: "*".to_string(),
        })
        .collect()
}

/// Fingerprints longer than this are replaced by a hash of themselves.
const MAX_PRINT: usize = 512;

/// `print` itself, or a 128-bit hash of it when it is long: inlining nests,
/// and `select a + a as a` over ten CTE layers would otherwise double a
/// thousand times.
fn bounded(print: String) -> String {
    use std::hash::{Hash, Hasher};
    if print.len() <= MAX_PRINT {
        return print;
    }
    // SipHash with fixed keys: the same text hashes the same in both versions.
    let hash = |salt: u8| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        salt.hash(&mut h);
        print.hash(&mut h);
        h.finish()
    };
    format!("#{:016x}{:016x}", hash(1), hash(2))
}

/// Replaces the column references at the top level of an expression by
/// the fingerprints of what they denote; folds every identifier.
struct Substitute<'a> {
    depth: usize,
    visible: &'a [Source],
    dialect: SqlDialect,
}

impl VisitorMut for Substitute<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, _: &mut Query) -> ControlFlow<()> {
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &mut Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_ident(&mut self, id: &mut Ident) -> ControlFlow<()> {
        fold_ident(id, self.dialect);
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        if self.depth > 0 {
            return ControlFlow::Continue(());
        }
        let cols = match e {
            Expr::Identifier(id) => resolve_ident(self.visible, &[], id, self.dialect),
            Expr::CompoundIdentifier(parts) if parts.len() > 1 => {
                let (last, qualifier) = parts.split_last().expect("len > 1");
                resolve_ident(self.visible, qualifier, last, self.dialect)
            }
            _ => return ControlFlow::Continue(()),
        };
        if !cols.is_empty() {
            let prints: Vec<&str> = cols.iter().map(|c| c.fingerprint.as_str()).collect();
            *e = Expr::Identifier(Ident::new(format!("⟦{}⟧", prints.join("|"))));
        }
        ControlFlow::Continue(())
    }
}

/// Gathers column names at the top level of an expression tree, and the
/// subqueries under it (resolved separately, in their own scope).
struct Collect {
    depth: usize,
    names: Vec<(Vec<Ident>, Ident)>,
    subqueries: Vec<Query>,
}

impl Visitor for Collect {
    type Break = ();

    fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
        if self.depth == 0 {
            self.subqueries.push(q.clone());
        }
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        if self.depth > 0 {
            return ControlFlow::Continue(());
        }
        // `o.*` reads the whole row: as a value (`(o.*) is null`) or as a
        // function's argument (`to_jsonb(o.*)`, no expression of its own).
        let star = |name: &sqlparser::ast::ObjectName| -> Vec<Ident> {
            name.0
                .iter()
                .filter_map(|p| p.as_ident().cloned())
                .collect()
        };
        match e {
            Expr::Identifier(id) => self.names.push((Vec::new(), id.clone())),
            Expr::CompoundIdentifier(parts) if parts.len() > 1 => {
                let (last, qualifier) = parts.split_last().expect("len > 1");
                self.names.push((qualifier.to_vec(), last.clone()));
            }
            Expr::QualifiedWildcard(name, _) => self.names.push((star(name), Ident::new("*"))),
            // DuckDB's `COLUMNS('regex')` / `COLUMNS(c -> ...)`: columns
            // chosen by name when the query runs; any of every source.
            Expr::Function(f)
                if f.name.0.len() == 1 && f.name.to_string().eq_ignore_ascii_case("columns") =>
            {
                self.names.push((Vec::new(), Ident::new("*")));
            }
            Expr::Function(f) => {
                if let sqlparser::ast::FunctionArguments::List(list) = &f.args {
                    for arg in &list.args {
                        let (sqlparser::ast::FunctionArg::Unnamed(a)
                        | sqlparser::ast::FunctionArg::Named { arg: a, .. }
                        | sqlparser::ast::FunctionArg::ExprNamed { arg: a, .. }) = arg;
                        if let sqlparser::ast::FunctionArgExpr::QualifiedWildcard(name) = a {
                            self.names.push((star(name), Ident::new("*")));
                        }
                    }
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

/// The constraint of a join (`ON`, `USING`, ...), whatever its kind.
pub(crate) fn join_constraint(op: &JoinOperator) -> Option<&JoinConstraint> {
    use JoinOperator::*;
    match op {
        Join(c) | Inner(c) | Left(c) | LeftOuter(c) | Right(c) | RightOuter(c) | FullOuter(c)
        | CrossJoin(c) | Semi(c) | LeftSemi(c) | RightSemi(c) | Anti(c) | LeftAnti(c)
        | RightAnti(c) | StraightJoin(c) => Some(c),
        _ => None,
    }
}

/// The kind of a join, with synonyms (`JOIN`, `INNER JOIN`) as one.
fn join_kind(op: &JoinOperator) -> &'static str {
    use JoinOperator::*;
    match op {
        Join(_) | Inner(_) => "inner",
        Left(_) | LeftOuter(_) => "left",
        Right(_) | RightOuter(_) => "right",
        FullOuter(_) => "full",
        CrossJoin(_) => "cross",
        Semi(_) | LeftSemi(_) => "semi",
        RightSemi(_) => "right semi",
        Anti(_) | LeftAnti(_) => "anti",
        RightAnti(_) => "right anti",
        StraightJoin(_) => "straight",
        CrossApply => "cross apply",
        OuterApply => "outer apply",
        _ => "other",
    }
}

/// The 0-based output column an ordinal (`GROUP BY 2`, `ORDER BY 1`) names.
fn output_position(e: &Expr) -> Option<usize> {
    e.to_string().parse::<usize>().ok()?.checked_sub(1)
}

/// A column of a base table.
fn base_column(relation: &str, column: &str) -> OutputColumn {
    OutputColumn {
        name: column.to_string(),
        sources: BTreeSet::from([ColumnRef {
            relation: relation.to_string(),
            column: column.to_string(),
        }]),
        fingerprint: format!("{relation}.{column}"),
    }
}

/// The upstream columns of the columns a reference may denote.
fn sources_of(cols: &[Cow<'_, OutputColumn>]) -> BTreeSet<ColumnRef> {
    cols.iter()
        .flat_map(|c| c.sources.iter().cloned())
        .collect()
}

/// [`resolve`] for a parsed reference.
fn resolve_ident<'s>(
    visible: &'s [Source],
    qualifier: &[Ident],
    column: &Ident,
    dialect: SqlDialect,
) -> Vec<Cow<'s, OutputColumn>> {
    // The `*` of `o.*` and `COLUMNS(...)`: no name to quote.
    let column = match (column.value.as_str(), column.quote_style) {
        ("*", None) => "*".to_string(),
        _ => ident_name(column, dialect),
    };
    match qualifier {
        [] => resolve(visible, "", &column),
        [one] => resolve(visible, &ident_name(one, dialect), &column),
        _ => {
            let q: Vec<String> = qualifier.iter().map(|i| ident_name(i, dialect)).collect();
            resolve(visible, &q.join("."), &column)
        }
    }
}

/// The source a qualifier names: its alias, or the tail of its relation.
fn find_source<'s>(scope: &'s [Source], qualifier: &str) -> Option<&'s Source> {
    let tail_of = |r: &str| {
        r.strip_suffix(qualifier)
            .is_some_and(|head| head.is_empty() || head.ends_with('.'))
    };
    scope
        .iter()
        .find(|s| s.alias == qualifier || s.relation.as_deref().is_some_and(tail_of))
}

/// Every column of a source's row: its columns when known, else its
/// table's `*` (any column).
fn whole_row(s: &Source) -> Vec<Cow<'_, OutputColumn>> {
    match &s.columns {
        Some(cols) => cols.iter().map(Cow::Borrowed).collect(),
        None => s
            .relation
            .as_ref()
            .map(|r| vec![Cow::Owned(base_column(r, "*"))])
            .unwrap_or_default(),
    }
}

/// The columns a column reference may denote. Unqualified, it is the
/// first source that has the column; failing that, every source whose
/// columns are unknown (it could be any of them). Columns found in a
/// scope are borrowed from it: a reference is resolved for every mention.
fn resolve<'s>(visible: &'s [Source], qualifier: &str, column: &str) -> Vec<Cow<'s, OutputColumn>> {
    let lookup = |s: &'s Source| -> Option<Vec<Cow<'s, OutputColumn>>> {
        match &s.columns {
            Some(cols) => cols.iter().find(|c| c.name == column).map_or_else(
                || {
                    // A star that was not expanded may hold the column.
                    let stars: Vec<Cow<'s, OutputColumn>> = cols
                        .iter()
                        .filter(|c| c.name == "*")
                        .flat_map(|c| c.sources.iter())
                        .map(|r| Cow::Owned(base_column(&r.relation, column)))
                        .collect();
                    (!stars.is_empty()).then_some(stars)
                },
                |c| Some(vec![Cow::Borrowed(c)]),
            ),
            None => s
                .relation
                .as_ref()
                .map(|r| vec![Cow::Owned(base_column(r, column))]),
        }
    };
    // Columns declared for a table (YAML) may be incomplete: a name not
    // among them is still the table's, rather than nobody's.
    let declared_elsewhere = |s: &'s Source| -> Option<Vec<Cow<'s, OutputColumn>>> {
        match (&s.columns, &s.relation) {
            (Some(_), Some(r)) => Some(vec![Cow::Owned(base_column(r, column))]),
            _ => None,
        }
    };
    // `o.*` in an expression (`to_jsonb(o.*)`): the whole row.
    if column == "*"
        && let Some(src) = find_source(visible, qualifier)
    {
        return whole_row(src);
    }
    // `COLUMNS('re')`: any column of the query's own sources.
    if column == "*" && qualifier.is_empty() {
        return visible
            .iter()
            .filter(|s| !s.outer)
            .flat_map(whole_row)
            .collect();
    }
    if !qualifier.is_empty() {
        if let Some(src) = find_source(visible, qualifier) {
            return lookup(src)
                .or_else(|| declared_elsewhere(src))
                .unwrap_or_default();
        }
        // Struct field access: `alias.column.field`, or `column.field`.
        let mut parts = qualifier.splitn(3, '.');
        let (first, second) = (parts.next().unwrap_or_default(), parts.next());
        return match second {
            Some(col) if find_source(visible, first).is_some() => resolve(visible, first, col),
            _ if find_source(visible, first).is_none() => resolve(visible, "", first),
            _ => Vec::new(),
        };
    }
    if let Some(found) = visible
        .iter()
        .filter(|s| s.columns.is_some())
        .find_map(lookup)
    {
        return found;
    }
    // A bare table alias no known column is named after: the whole row
    // (`md5(o::text)`, `row_to_json(o)`, `group by o`), besides any
    // column of that name a table of unknown columns may hold.
    if let Some(src) = visible.iter().find(|s| s.alias == column) {
        let mut row = whole_row(src);
        row.extend(candidates_of(visible, &lookup, &declared_elsewhere));
        return row;
    }
    candidates_of(visible, &lookup, &declared_elsewhere)
}

/// What an unqualified name no source of known columns holds may denote
/// (see [`resolve`]).
fn candidates_of<'s>(
    visible: &'s [Source],
    lookup: &dyn Fn(&'s Source) -> Option<Vec<Cow<'s, OutputColumn>>>,
    declared_elsewhere: &dyn Fn(&'s Source) -> Option<Vec<Cow<'s, OutputColumn>>>,
) -> Vec<Cow<'s, OutputColumn>> {
    // Innermost first: tables of unknown columns, then tables whose declared
    // columns lack the name; then the same in enclosing queries.
    let candidates = |outer: bool| -> Vec<Cow<'s, OutputColumn>> {
        let of = |s: &&Source| s.outer == outer;
        let unknown: Vec<Cow<'s, OutputColumn>> = visible
            .iter()
            .filter(of)
            .filter(|s| s.columns.is_none())
            .filter_map(lookup)
            .flatten()
            .collect();
        if !unknown.is_empty() {
            return unknown;
        }
        visible
            .iter()
            .filter(of)
            .filter_map(declared_elsewhere)
            .flatten()
            .collect()
    };
    let local = candidates(false);
    if local.is_empty() {
        candidates(true)
    } else {
        local
    }
}

/// The candidates of an unqualified `column` resolved to `cols`, when no
/// source of known columns holds it and the guess spans several tables.
fn ambiguity(
    visible: &[Source],
    column: &str,
    cols: &[Cow<'_, OutputColumn>],
) -> Option<BTreeSet<String>> {
    let held = visible.iter().any(|s| {
        s.columns
            .as_ref()
            .is_some_and(|c| c.iter().any(|o| o.name == column || o.name == "*"))
    });
    if held {
        return None;
    }
    let candidates: BTreeSet<String> = sources_of(cols)
        .into_iter()
        .map(|r| format!("{}.{}", r.relation, r.column))
        .collect();
    let tables: BTreeSet<&str> = cols
        .iter()
        .flat_map(|c| c.sources.iter())
        .map(|r| r.relation.as_str())
        .collect();
    (tables.len() > 1).then_some(candidates)
}

/// The names of `columns` as a table holds them: each once, first
/// occurrence kept (`select * from a join b using (c)` outputs two `d`s,
/// and a table built from it would keep one; repeating them downstream
/// doubled the columns per model).
pub fn unique_names(columns: &[OutputColumn]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    columns
        .iter()
        .filter(|c| seen.insert(c.name.as_str()))
        .map(|c| c.name.clone())
        .collect()
}

fn rename_columns(cols: &mut [OutputColumn], names: &[String]) {
    // Past a collapsed `*` positions no longer line up with the names.
    let upto = cols.iter().position(is_collapsed).unwrap_or(cols.len());
    for (c, n) in cols[..upto].iter_mut().zip(names) {
        c.name = n.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::parser::Parser;

    fn lineage(sql: &str, known: &[(&str, &[&str])]) -> ColumnLineage {
        let dialect = SqlDialect::Generic;
        let stmt = Parser::parse_sql(&*dialect.parser_dialect(), sql)
            .unwrap()
            .remove(0);
        let known = known
            .iter()
            .map(|(t, cols)| (t.to_string(), cols.iter().map(|c| c.to_string()).collect()))
            .collect();
        column_lineage(&stmt, dialect, &known).unwrap()
    }

    /// `name <- rel.col, rel.col` per output column, for compact asserts.
    fn show(l: &ColumnLineage) -> Vec<String> {
        l.columns
            .iter()
            .map(|c| {
                let s: Vec<String> = c
                    .sources
                    .iter()
                    .map(|r| format!("{}.{}", r.relation, r.column))
                    .collect();
                format!("{} <- {}", c.name, s.join(", "))
            })
            .collect()
    }

    fn conds(l: &ColumnLineage) -> Vec<String> {
        l.conditions
            .iter()
            .map(|r| format!("{}.{}", r.relation, r.column))
            .collect()
    }

    #[test]
    fn aliases_joins_and_conditions() {
        let l = lineage(
            "select o.id, o.amount * c.rate as amount_usd, upper(c.name) \
             from shop.orders o join shop.customers c on o.customer_id = c.id \
             where o.status = 'paid' group by 1, 2, 3",
            &[],
        );
        assert_eq!(
            show(&l),
            [
                "id <- shop.orders.id",
                "amount_usd <- shop.customers.rate, shop.orders.amount",
                "upper(c.name) <- shop.customers.name",
            ]
        );
        assert_eq!(
            conds(&l),
            // `group by 1, 2, 3` groups by what the output columns read.
            [
                "shop.customers.id",
                "shop.customers.name",
                "shop.customers.rate",
                "shop.orders.amount",
                "shop.orders.customer_id",
                "shop.orders.id",
                "shop.orders.status"
            ]
        );
    }

    #[test]
    fn data_changing_statements_have_column_lineage() {
        let l = lineage(
            "WITH r AS (SELECT order_id, amount FROM raw.orders) INSERT INTO mart.r (id, amt) SELECT order_id, amount * 2 FROM r",
            &[],
        );
        assert_eq!(
            show(&l),
            ["id <- raw.orders.order_id", "amt <- raw.orders.amount"]
        );
        let l = lineage(
            "UPDATE mart.users u SET country = g.country_name FROM ref.geo g WHERE u.ip_block = g.ip_block",
            &[],
        );
        assert_eq!(show(&l), ["country <- ref.geo.country_name"]);
        assert_eq!(conds(&l), ["mart.users.ip_block", "ref.geo.ip_block"]);
        let l = lineage(
            "MERGE INTO mart.c t USING staging.c s ON t.id = s.id WHEN MATCHED THEN UPDATE SET name = s.name WHEN NOT MATCHED THEN INSERT (id, name) VALUES (s.id, upper(s.name))",
            &[],
        );
        assert_eq!(show(&l), ["name <- staging.c.name", "id <- staging.c.id"]);
        assert_eq!(conds(&l), ["mart.c.id", "staging.c.id"]);
    }

    #[test]
    fn using_outputs_one_column_and_compares_both_sides() {
        let l = lineage(
            "select * from a join b using (c)",
            &[("a", &["c", "x"]), ("b", &["c", "y"])],
        );
        assert_eq!(show(&l), ["c <- a.c", "x <- a.x", "y <- b.y"]);
        assert_eq!(conds(&l), ["a.c", "b.c"]);
        // `b.*` is all of b's columns, its `c` too.
        let l = lineage(
            "select b.* from a join b using (c)",
            &[("a", &["c", "x"]), ("b", &["c", "y"])],
        );
        assert_eq!(show(&l), ["c <- b.c", "y <- b.y"]);
    }

    #[test]
    fn a_star_of_too_many_columns_becomes_one_star_column() {
        // Every step doubles the columns: 2^20 of them at the end.
        let mut sql = String::from("with s0 as (select * from a)");
        for i in 1..=20 {
            sql.push_str(&format!(
                ", s{i} as (select * from s{p} join s{p} as r using (c))",
                p = i - 1
            ));
        }
        sql.push_str(" select * from s20");
        let l = lineage(&sql, &[("a", &["c", "d"])]);
        assert!(
            l.columns.len() <= MAX_STAR_COLUMNS + 1,
            "{}",
            l.columns.len()
        );
        let star = l
            .columns
            .iter()
            .find(|c| c.name == "*")
            .expect("a `*` column");
        assert_eq!(
            star.sources
                .iter()
                .map(|r| format!("{}.{}", r.relation, r.column))
                .collect::<Vec<_>>(),
            ["a.d"]
        );
    }

    /// `t` with `n` columns `c0..`, as [`lineage`] takes them.
    fn wide(sql: &str, n: usize) -> ColumnLineage {
        let cols: Vec<String> = (0..n).map(|i| format!("c{i}")).collect();
        let cols: Vec<&str> = cols.iter().map(String::as_str).collect();
        lineage(sql, &[("t", &cols)])
    }

    #[test]
    fn the_stars_of_one_statement_copy_a_bounded_number_of_columns() {
        // 100 CTEs each `select *` from the one before over 10,000 columns
        // copied a million columns; past the budget each is one `*` column
        // reading any column of `t`.
        let mut sql = String::from("with s0 as (select * from t)");
        for i in 1..100 {
            sql.push_str(&format!(", s{i} as (select * from s{})", i - 1));
        }
        sql.push_str(" select * from s99");
        assert_eq!(show(&wide(&sql, 10_000)), ["* <- t.*"]);
        // Below the budget every column is its own.
        let l = wide("with s0 as (select * from t) select * from s0", 10_000);
        assert_eq!(l.columns.len(), 10_000);
        assert_eq!(show(&l)[9_999], "c9999 <- t.c9999");
    }

    #[test]
    fn a_set_operation_with_a_collapsed_star_on_a_side_reads_everything() {
        // The first branches are expanded, the later ones collapse: the
        // columns no longer line up by position.
        let sql = vec!["select * from t"; 60].join(" union all ");
        assert_eq!(show(&wide(&sql, 10_000)), ["* <- t.*"]);
        // A `*` of unknown columns beside two columns: pairing by position
        // dropped `x.b`.
        let l = lineage("select * from u union all select a, b from x", &[]);
        assert_eq!(show(&l), ["* <- u.*, x.a, x.b"]);
    }

    #[test]
    fn a_long_union_past_the_column_cap_still_reads_every_column() {
        // Once the budget is spent each branch is `t.*`, read once.
        let sql = vec!["select * from t"; 300].join(" union all ");
        let l = wide(&sql, MAX_STAR_COLUMNS + 1);
        assert_eq!(l.columns.len(), 1);
        let reads: Vec<String> = l.columns[0]
            .sources
            .iter()
            .map(|r| format!("{}.{}", r.relation, r.column))
            .collect();
        assert!(reads.contains(&"t.*".to_string()), "{:?}", &reads[..3]);
        assert!(reads.contains(&"t.c10000".to_string()));
    }

    #[test]
    fn names_by_position_stop_at_a_collapsed_star() {
        let l = wide(
            "insert into tgt (a, b) select c0 as x, * from t",
            MAX_STAR_COLUMNS + 1,
        );
        let shown = show(&l);
        assert_eq!(shown[0], "a <- t.c0");
        assert_eq!(shown.len(), 2);
        assert!(
            shown[1].starts_with("* <- t.c0, t.c1, "),
            "{}",
            &shown[1][..40]
        );
    }

    #[test]
    fn through_ctes_and_subqueries_with_renames() {
        let l = lineage(
            "with paid as (select id, amount as amt from orders where paid) \
             select x.id, x.total from (select id, sum(amt) as total from paid group by id) as x",
            &[],
        );
        assert_eq!(show(&l), ["id <- orders.id", "total <- orders.amount"]);
        assert_eq!(conds(&l), ["orders.id", "orders.paid"]);
        let renamed = lineage("with t (a, b) as (select x, y from s) select b from t", &[]);
        assert_eq!(show(&renamed), ["b <- s.y"]);
    }

    #[test]
    fn stars_expand_when_columns_are_known_and_are_flagged_otherwise() {
        let known: &[(&str, &[&str])] = &[("orders", &["id", "amount"])];
        let l = lineage("select * from orders", known);
        assert_eq!(show(&l), ["id <- orders.id", "amount <- orders.amount"]);
        assert!(l.unexpanded_stars.is_empty());
        let l = lineage(
            "select o.*, c.name from orders o join customers c using (id)",
            known,
        );
        assert_eq!(
            show(&l),
            [
                "id <- orders.id",
                "amount <- orders.amount",
                "name <- customers.name"
            ]
        );
        let u = lineage("select * from (select * from events) e", &[]);
        assert_eq!(show(&u), ["* <- events.*"]);
        assert_eq!(u.unexpanded_stars.iter().collect::<Vec<_>>(), ["events"]);
        // A column picked out of an unexpanded star still reaches its table.
        let picked = lineage("select kind from (select * from events) e", &[]);
        assert_eq!(show(&picked), ["kind <- events.kind"]);
    }

    #[test]
    fn unions_scalar_subqueries_and_statement_shapes() {
        let l = lineage("select a from t1 union all select b from t2", &[]);
        assert_eq!(show(&l), ["a <- t1.a, t2.b"]);
        let s = lineage(
            "select id, (select max(v) from m where m.k = t.id) as top from t",
            &[],
        );
        assert_eq!(show(&s), ["id <- t.id", "top <- m.v"]);
        assert_eq!(conds(&s), ["m.k", "t.id"]);
        let ins = lineage("insert into out (x, y) select a, b from src", &[]);
        assert_eq!(show(&ins), ["x <- src.a", "y <- src.b"]);
        let ctas = lineage("create table out as select a + b as c from src", &[]);
        assert_eq!(show(&ctas), ["c <- src.a, src.b"]);
        let dialect = SqlDialect::Generic;
        let drop = Parser::parse_sql(&*dialect.parser_dialect(), "drop table x").unwrap();
        assert!(column_lineage(&drop[0], dialect, &KnownColumns::new()).is_none());
    }

    #[test]
    fn fingerprints_see_through_aliases_and_catch_changed_meaning() {
        let prints = |sql: &str| {
            let l = lineage(sql, &[]);
            let cols: Vec<(String, String)> = l
                .columns
                .iter()
                .map(|c| (c.name.clone(), c.fingerprint.clone()))
                .collect();
            (cols, l.row_fingerprints)
        };
        let base = prints(
            "with p as (select amount as amt, status from orders) \
             select sum(p.amt) as total from p where p.status = 'paid'",
        );
        // The CTE's column alias and the table alias are renamed: same meaning.
        let renamed = prints(
            "with q as (select amount as a, status as st from orders o) \
             select SUM(x.a) as total from q x where x.st = 'paid'",
        );
        assert_eq!(base, renamed);
        let expr = prints(
            "with p as (select amount * 2 as amt, status from orders) \
             select sum(p.amt) as total from p where p.status = 'paid'",
        );
        assert_ne!(base.0, expr.0);
        assert_eq!(base.1, expr.1);
        let filter = prints(
            "with p as (select amount as amt, status from orders) \
             select sum(p.amt) as total from p where p.status = 'open'",
        );
        assert_eq!(base.0, filter.0);
        assert_ne!(base.1, filter.1);
        let joined = |kind: &str| {
            prints(&format!(
                "select o.id from orders o {kind} customers c on o.cid = c.id"
            ))
            .1
        };
        assert_eq!(joined("join"), joined("inner join"));
        assert_ne!(joined("join"), joined("left join"));
    }

    #[test]
    fn struct_fields_and_ordered_limits() {
        let fields = lineage(
            "select e.payload.user_id as uid, address.city from events e join people p on e.pid = p.id",
            &[("people", &["id", "address"])],
        );
        assert_eq!(
            show(&fields),
            ["uid <- events.payload", "city <- people.address"]
        );
        let top = lineage(
            "select id, amount as amt from orders order by amt desc limit 10",
            &[],
        );
        // Which ten rows come out depends on the amounts.
        assert_eq!(conds(&top), ["orders.amount"]);
        let unlimited = lineage("select id from orders order by ts", &[]);
        assert!(unlimited.conditions.is_empty());
    }

    #[test]
    fn fingerprints_stay_small_however_deep_the_nesting() {
        let mut sql = String::from("with c0 as (select a from t)");
        for i in 1..=60 {
            sql.push_str(&format!(", c{i} as (select a + a as a from c{})", i - 1));
        }
        sql.push_str(" select a from c60");
        let l = lineage(&sql, &[]);
        assert!(l.columns[0].fingerprint.len() <= MAX_PRINT);
        assert_eq!(show(&l), ["a <- t.a"]);
        let other = lineage(&sql.replacen("a + a", "a - a", 1), &[]);
        assert_ne!(l.columns[0].fingerprint, other.columns[0].fingerprint);
    }
}
