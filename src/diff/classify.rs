//! Comparing two versions of one job's SQL: statement by statement, first by
//! canonical text (equal = no-op), then by what the statement reads, which
//! rows it keeps, and each output column's fingerprint.

use std::collections::{BTreeMap, BTreeSet};

use crate::sql::{ColumnLineage, ScriptLineage, StatementLineage};

use super::ChangeKind;

/// How a job's SQL changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub kind: ChangeKind,
    /// Columns named in the change (`removed: a`, `a → b`, `added: c`).
    pub columns: Vec<String>,
    /// For a `column` change: the output columns whose values changed.
    pub changed: BTreeSet<String>,
    /// Why, in a sentence.
    pub reason: String,
    /// 1-based line of the first statement that changed (head side).
    pub line: u64,
    /// Whether `changed` names the output columns of the job's one
    /// statement (in a script they may be a staging table's).
    pub precise: bool,
}

impl Verdict {
    /// A verdict naming no columns.
    pub fn new(kind: ChangeKind, reason: impl Into<String>, line: u64) -> Self {
        Verdict {
            kind,
            columns: Vec::new(),
            changed: BTreeSet::new(),
            reason: reason.into(),
            line,
            precise: false,
        }
    }
}

/// Compares two versions of a script (a model's query is a one-statement
/// script).
pub(crate) fn compare_scripts(base: &ScriptLineage, head: &ScriptLineage) -> Verdict {
    for (side, script) in [("base", base), ("head", head)] {
        if let Some(e) = script.errors.first() {
            return Verdict::new(
                ChangeKind::CouldNotCompare,
                format!(
                    "statement {} does not parse on the {side} side (line {}, column {}: {})",
                    e.statement, e.line, e.column, e.message
                ),
                e.line,
            );
        }
    }
    let first_line = head.statements.first().map_or(1, |s| s.line);
    if base.statements.len() != head.statements.len() {
        return Verdict::new(
            ChangeKind::Breaking,
            format!(
                "statements changed from {} to {}",
                base.statements.len(),
                head.statements.len()
            ),
            first_line,
        );
    }
    let mut verdict: Option<Verdict> = None;
    for (b, h) in base.statements.iter().zip(&head.statements) {
        if b.canonical == h.canonical {
            continue;
        }
        let v = compare_statements(b, h);
        match &mut verdict {
            None => verdict = Some(v),
            Some(acc) => {
                if v.kind.rank() < acc.kind.rank() {
                    acc.kind = v.kind;
                    acc.reason = v.reason;
                }
                acc.columns.extend(v.columns);
                acc.changed.extend(v.changed);
            }
        }
    }
    let mut verdict = verdict.unwrap_or_else(|| {
        Verdict::new(
            ChangeKind::NoOp,
            "formatting, comments or case only",
            first_line,
        )
    });
    verdict.columns.sort();
    verdict.columns.dedup();
    verdict.precise = head.statements.len() == 1;
    verdict
}

/// Compares two versions of one statement whose canonical texts differ.
fn compare_statements(b: &StatementLineage, h: &StatementLineage) -> Verdict {
    let breaking = |why: String| Verdict::new(ChangeKind::Breaking, why, h.line);
    if b.kind != h.kind || b.targets != h.targets {
        return breaking(format!(
            "the statement now writes {} ({})",
            list(&h.targets),
            h.kind.as_str()
        ));
    }
    if b.sources != h.sources {
        let added: Vec<&String> = h
            .sources
            .iter()
            .filter(|s| !b.sources.contains(s))
            .collect();
        let removed: Vec<&String> = b
            .sources
            .iter()
            .filter(|s| !h.sources.contains(s))
            .collect();
        return breaking(format!(
            "sources changed (added: {}; removed: {})",
            list(&added),
            list(&removed)
        ));
    }
    match (&b.columns, &h.columns) {
        (Some(bc), Some(hc)) => compare_columns(bc, hc, h.line),
        _ => breaking(format!("the {} statement changed", h.kind.as_str())),
    }
}

/// Compares the rows and columns of two versions of a query.
fn compare_columns(b: &ColumnLineage, h: &ColumnLineage, line: u64) -> Verdict {
    if b.row_fingerprints != h.row_fingerprints {
        let clauses: BTreeSet<&str> = b
            .row_fingerprints
            .symmetric_difference(&h.row_fingerprints)
            .map(|p| clause_of(p))
            .collect();
        let clauses: Vec<&str> = clauses.into_iter().collect();
        return Verdict::new(
            ChangeKind::Breaking,
            format!("which rows come out changed ({})", clauses.join(", ")),
            line,
        );
    }
    let first = |cols: &ColumnLineage| -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        for c in &cols.columns {
            m.entry(c.name.clone())
                .or_insert_with(|| c.fingerprint.clone());
        }
        m
    };
    let (bm, hm) = (first(b), first(h));
    let removed: Vec<&String> = bm.keys().filter(|k| !hm.contains_key(*k)).collect();
    let added: Vec<&String> = hm.keys().filter(|k| !bm.contains_key(*k)).collect();
    let changed: BTreeSet<String> = bm
        .iter()
        .filter(|(k, v)| hm.get(*k).is_some_and(|hv| hv != *v))
        .map(|(k, _)| k.clone())
        .collect();
    if !removed.is_empty() {
        // A removed column computed exactly like an added one was renamed.
        // Each removed column takes the first added one (by name) computed
        // as it was, found by computation: scanning the added columns for
        // each removed one was quadratic (50,000 renamed: minutes).
        let mut by_computation: BTreeMap<&String, std::collections::VecDeque<&String>> =
            BTreeMap::new();
        for a in &added {
            by_computation.entry(&hm[*a]).or_default().push_back(*a);
        }
        let mut columns = Vec::new();
        for r in &removed {
            match by_computation.get_mut(&bm[*r]).and_then(|q| q.pop_front()) {
                Some(a) => columns.push(format!("{r} → {a}")),
                None => columns.push(format!("removed: {r}")),
            }
        }
        let mut v = Verdict::new(
            ChangeKind::Breaking,
            format!(
                "output column{} removed or renamed",
                crate::text::plural(removed.len())
            ),
            line,
        );
        v.columns = columns;
        return v;
    }
    if !changed.is_empty() {
        let mut v = Verdict::new(
            ChangeKind::Column,
            "the expressions of existing columns changed",
            line,
        );
        v.columns = changed.iter().cloned().collect();
        v.columns
            .extend(added.iter().map(|a| format!("added: {a}")));
        v.changed = changed;
        return v;
    }
    if !added.is_empty() {
        let mut v = Verdict::new(ChangeKind::NonBreaking, "output columns added", line);
        v.columns = added.iter().map(|a| format!("added: {a}")).collect();
        return v;
    }
    let order = |cols: &ColumnLineage| -> Vec<String> {
        cols.columns.iter().map(|c| c.name.clone()).collect()
    };
    let (bo, ho) = (order(b), order(h));
    if bo.len() != ho.len() {
        // Same names, another count: a repeated name added or dropped.
        return Verdict::new(
            ChangeKind::NonBreaking,
            "a repeated output column added or removed",
            line,
        );
    }
    if bo != ho {
        return Verdict::new(ChangeKind::NonBreaking, "column order changed", line);
    }
    Verdict::new(
        ChangeKind::NoOp,
        "same columns computed the same way (names inside the query changed)",
        line,
    )
}

/// The clause a row fingerprint comes from, for people.
fn clause_of(print: &str) -> &'static str {
    match print.split(':').next().unwrap_or("") {
        "where" => "WHERE",
        "having" => "HAVING",
        "qualify" => "QUALIFY",
        "join" => "JOIN",
        "group" => "GROUP BY",
        "distinct" => "DISTINCT",
        "set" => "set operator",
        "limit" => "LIMIT",
        "merge on" => "MERGE ON",
        "on insert" => "ON CONFLICT",
        "from function" => "a table function's arguments",
        p if p.starts_with("merge when") => "MERGE WHEN",
        _ => "rows",
    }
}

fn list<S: AsRef<str>>(items: &[S]) -> String {
    if items.is_empty() {
        return "none".to_string();
    }
    items
        .iter()
        .map(|s| s.as_ref())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::{KnownColumns, SqlDialect, script_semantics};

    fn verdict(base: &str, head: &str) -> Verdict {
        let read = |sql: &str| script_semantics(sql, SqlDialect::Generic, &KnownColumns::new());
        compare_scripts(&read(base), &read(head))
    }

    const BASE: &str = "select o.id, o.amount, o.status from shop.orders o \
                        join shop.customers c on o.customer_id = c.id where o.amount > 0";

    #[test]
    fn each_kind_of_change() {
        let case = |head: &str| {
            let v = verdict(BASE, head);
            (v.kind, v.columns)
        };
        let formatted = "SELECT o.id,\n  o.amount,  -- money\n  o.status\nFROM shop.orders AS o\n\
                         INNER JOIN shop.customers AS c ON o.customer_id = c.id\nWHERE o.amount > 0";
        assert_eq!(case(formatted), (ChangeKind::NoOp, vec![]));
        let added = BASE.replace("o.status", "o.status, c.name");
        assert_eq!(
            case(&added),
            (ChangeKind::NonBreaking, vec!["added: name".to_string()])
        );
        let removed = BASE.replace(", o.status", "");
        assert_eq!(
            case(&removed),
            (ChangeKind::Breaking, vec!["removed: status".to_string()])
        );
        let renamed = BASE.replace("o.status", "o.status as state");
        assert_eq!(
            case(&renamed),
            (ChangeKind::Breaking, vec!["status → state".to_string()])
        );
        let expr = BASE.replace("o.amount,", "o.amount * 100 as amount,");
        assert_eq!(
            case(&expr),
            (ChangeKind::Column, vec!["amount".to_string()])
        );
        let filter = BASE.replace("> 0", ">= 0");
        assert_eq!(case(&filter).0, ChangeKind::Breaking);
        let join = BASE.replace("join", "left join");
        assert_eq!(case(&join).0, ChangeKind::Breaking);
        let source = BASE.replace("shop.customers", "shop.clients");
        assert_eq!(case(&source).0, ChangeKind::Breaking);
        assert_eq!(
            verdict(BASE, "select from").kind,
            ChangeKind::CouldNotCompare
        );
    }

    #[test]
    fn ctes_set_operators_distinct_windows_and_order() {
        let kind = |base: &str, head: &str| verdict(base, head).kind;
        let cte = "with p as (select amount as amt, id from orders) select id, amt as total from p";
        // Only a CTE column's name changed: the output is computed the same.
        assert_eq!(
            kind(
                cte,
                "with q as (select amount as a, id from orders) select id, a as total from q"
            ),
            ChangeKind::NoOp
        );
        assert_eq!(
            kind(cte, &cte.replace("from orders", "from orders where id > 0")),
            ChangeKind::Breaking
        );
        let union = "select id from a union select id from b";
        assert_eq!(
            kind(union, &union.replace("union", "union all")),
            ChangeKind::Breaking
        );
        assert_eq!(
            kind("select id, kind from t", "select distinct id, kind from t"),
            ChangeKind::Breaking
        );
        assert_eq!(
            kind("select id, kind from t", "select kind, id from t"),
            ChangeKind::NonBreaking
        );
        assert_eq!(
            kind("select id, kind from t", "select id, 1 as one, kind from t"),
            ChangeKind::NonBreaking
        );
        let v = verdict("select id, kind, id from t", "select id, kind from t");
        assert_eq!(
            (v.kind, v.reason.as_str()),
            (
                ChangeKind::NonBreaking,
                "a repeated output column added or removed"
            )
        );
        let window = "select id, row_number() over (partition by kind order by ts) as rn from t";
        let v = verdict(window, &window.replace("order by ts", "order by ts desc"));
        assert_eq!(
            (v.kind, v.columns),
            (ChangeKind::Column, vec!["rn".to_string()])
        );
        let literal = "select id, 'web' as channel from t";
        assert_eq!(
            kind(literal, &literal.replace("'web'", "'app'")),
            ChangeKind::Column
        );
        let limited = "select id from t order by ts limit 10";
        assert_eq!(
            kind(limited, &limited.replace("ts", "ts desc")),
            ChangeKind::Breaking
        );
    }

    /// A query from a small grammar, printed in a given style: what must
    /// not matter (case, spacing, comments, alias and CTE names) comes from
    /// the style, what must matter from the query.
    mod generated {
        use super::*;
        use proptest::prelude::*;

        #[derive(Debug, Clone)]
        struct Query {
            /// (column, expression form 0..4, constant) per output column.
            columns: Vec<(usize, usize, u8)>,
            /// (column, constant) of a `WHERE col > constant`.
            filter: Option<(usize, u8)>,
            join: bool,
            cte: bool,
        }

        #[derive(Debug, Clone)]
        struct Style {
            upper: bool,
            space: &'static str,
            comments: bool,
            alias: &'static str,
            cte_name: &'static str,
        }

        const COLS: [&str; 4] = ["id", "amount", "status", "created_at"];

        fn query() -> impl Strategy<Value = Query> {
            (
                proptest::collection::vec((0..4usize, 0..4usize, 1..9u8), 1..5),
                proptest::option::of((0..4usize, 0..9u8)),
                any::<bool>(),
                any::<bool>(),
            )
                .prop_map(|(mut columns, filter, join, cte)| {
                    // One output column per source column: names stay unique.
                    columns.sort_by_key(|c| c.0);
                    columns.dedup_by_key(|c| c.0);
                    Query {
                        columns,
                        filter,
                        join,
                        cte,
                    }
                })
        }

        fn style() -> impl Strategy<Value = Style> {
            (
                any::<bool>(),
                prop::sample::select(vec![" ", "  ", "\n", "\n\t", " \n  "]),
                any::<bool>(),
                prop::sample::select(vec!["o", "ord", "t1", "src"]),
                prop::sample::select(vec!["base", "cleaned", "x"]),
            )
                .prop_map(|(upper, space, comments, alias, cte_name)| Style {
                    upper,
                    space,
                    comments,
                    alias,
                    cte_name,
                })
        }

        fn print(q: &Query, s: &Style) -> String {
            let kw = |k: &str| match s.upper {
                true => k.to_uppercase(),
                false => k.to_lowercase(),
            };
            let sp = match s.comments {
                true => format!("{} /* note */{}", s.space, s.space),
                false => s.space.to_string(),
            };
            let a = s.alias;
            let expr = |c: usize, form: usize, k: u8| {
                let col = format!("{a}.{}", COLS[c]);
                match form {
                    0 => col,
                    1 => format!("{col} * {k}"),
                    2 => format!("{}({col})", kw("upper")),
                    _ => format!("{}({col}, {k})", kw("coalesce")),
                }
            };
            let select: Vec<String> = q
                .columns
                .iter()
                .map(|&(c, form, k)| format!("{} {} {}", expr(c, form, k), kw("as"), COLS[c]))
                .collect();
            let from = match q.cte {
                true => format!(
                    "{} {} {} ({} *{sp}{} shop.orders) ",
                    kw("with"),
                    s.cte_name,
                    kw("as"),
                    kw("select"),
                    kw("from")
                ),
                false => String::new(),
            };
            let table = if q.cte { s.cte_name } else { "shop.orders" };
            let mut sql = format!(
                "{from}{}{sp}{}{sp}{}{sp}{table} {a}",
                kw("select"),
                select.join(&format!(",{sp}")),
                kw("from")
            );
            if q.join {
                sql.push_str(&format!(
                    "{sp}{} shop.customers c {} {a}.id = c.id",
                    kw("join"),
                    kw("on")
                ));
            }
            if let Some((c, k)) = q.filter {
                sql.push_str(&format!("{sp}{}{sp}{a}.{} > {k}", kw("where"), COLS[c]));
            }
            sql
        }

        fn kind(base: &str, head: &str) -> ChangeKind {
            verdict(base, head).kind
        }

        proptest! {
            #[test]
            fn style_never_matters(q in query(), a in style(), b in style()) {
                prop_assert_eq!(kind(&print(&q, &a), &print(&q, &b)), ChangeKind::NoOp);
            }

            #[test]
            fn meaning_always_does(q in query(), a in style(), b in style(), pick in any::<prop::sample::Index>()) {
                let base = print(&q, &a);
                let i = pick.index(q.columns.len());
                // A changed expression of one column.
                let mut changed = q.clone();
                let (c, form, k) = changed.columns[i];
                changed.columns[i] = (c, (form + 1) % 4, k);
                let v = verdict(&base, &print(&changed, &b));
                prop_assert_eq!((v.kind, v.columns), (ChangeKind::Column, vec![COLS[c].to_string()]));
                // A removed column.
                if q.columns.len() > 1 {
                    let mut fewer = q.clone();
                    fewer.columns.remove(i);
                    prop_assert_eq!(kind(&base, &print(&fewer, &b)), ChangeKind::Breaking);
                }
                // A changed filter or join.
                let mut filtered = q.clone();
                filtered.filter = Some(q.filter.map_or((0, 1), |(c, k)| (c, k + 1)));
                prop_assert_eq!(kind(&base, &print(&filtered, &b)), ChangeKind::Breaking);
                let mut joined = q.clone();
                joined.join = !q.join;
                prop_assert_eq!(kind(&base, &print(&joined, &b)), ChangeKind::Breaking);
            }
        }
    }
}
