//! Filters that bound a job's rows by something that moves: the clock
//! (`where day >= current_date - 3`) or another table's data (`where day >=
//! (select max(day) - 2 from raw.orders)`). A job written so recomputes
//! only a recent slice whatever range it is run for; a backfill that runs
//! it to restate older partitions gets nothing for them.

use std::ops::ControlFlow;

use sqlparser::ast::{
    BinaryOperator, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, InTarget,
    JoinConstraint, Query, SetExpr, Statement, Value, Visit, Visitor,
};

use super::columns::join_constraint;
use super::dialect::SqlDialect;
use super::names::relation_name;
use super::parse::with_located_statements;

/// A filter of a script bounding rows by the clock or by another table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MovingBound {
    /// 1-based position of the statement holding it.
    pub statement: usize,
    /// The line the statement starts on.
    pub line: u64,
    /// The comparison, as written (normalised by the parser).
    pub filter: String,
    /// The table whose data the bound follows; `None`: the clock.
    pub follows: Option<String>,
}

/// `current_date`, `now`, `today`: the clock, not a column.
pub fn now_like(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "current_date"
            | "current_timestamp"
            | "current_time"
            | "now"
            | "today"
            | "sysdate"
            | "getdate"
            | "getutcdate"
            | "sysdatetime"
            | "systimestamp"
            | "localtimestamp"
            | "localtime"
            | "transaction_timestamp"
            | "statement_timestamp"
            | "clock_timestamp"
            | "curdate"
            | "utc_date"
            | "utc_timestamp"
            | "unix_timestamp"
    )
}

/// A name that reads as a time (`order_date`, `created_at`, `"Order Day"`).
pub fn time_like(name: &str) -> bool {
    // A quoted name's words (`"Order Day"`, `"order-date"`) read as `_`-joined.
    let n: String = name
        .chars()
        .map(|c| match c {
            ' ' | '-' | '.' => '_',
            c => c.to_ascii_lowercase(),
        })
        .collect();
    matches!(
        n.as_str(),
        "d" | "ds"
            | "dt"
            | "date"
            | "day"
            | "hour"
            | "week"
            | "month"
            | "year"
            | "ts"
            | "time"
            | "timestamp"
            | "event_time"
            | "period"
    ) || [
        "_date", "_day", "_at", "_ts", "_time", "_hour", "_dt", "_week", "_month", "_year",
        "_start", "_period",
    ]
    .iter()
    .any(|s| n.ends_with(s))
}

/// The first filter of `sql` (a `where`, `having`, `qualify` or join
/// condition anywhere in it) that bounds a time from below, or pins it, by
/// the clock or by data read from a table other than `own` (a high-water
/// mark read off the job's own table is the job's business: run into an
/// empty table it starts from nothing). `None` when there is none or the
/// script does not parse (the caller reports that itself).
pub fn moving_bound(sql: &str, dialect: SqlDialect, own: &str) -> Option<MovingBound> {
    with_located_statements(sql, dialect, |statements, lines| {
        statements.iter().enumerate().find_map(|(i, s)| {
            let mut finder = Finder {
                dialect,
                own,
                found: None,
            };
            finder.statement(s);
            let _ = s.visit(&mut finder);
            finder.found.map(|(filter, follows)| MovingBound {
                statement: i + 1,
                line: lines.get(i).copied().unwrap_or(0),
                filter,
                follows,
            })
        })
    })
    .ok()
    .flatten()
}

struct Finder<'a> {
    dialect: SqlDialect,
    own: &'a str,
    found: Option<(String, Option<String>)>,
}

impl Finder<'_> {
    /// The conditions a statement holds outside its queries.
    fn statement(&mut self, s: &Statement) {
        match s {
            Statement::Delete(d) => self.condition(d.selection.as_ref()),
            Statement::Update(u) => self.condition(u.selection.as_ref()),
            Statement::Merge(m) => self.condition(Some(&m.on)),
            _ => {}
        }
    }

    fn condition(&mut self, e: Option<&Expr>) {
        if self.found.is_some() {
            return;
        }
        if let Some(e) = e {
            self.found = self.bounds(e);
        }
    }

    /// A comparison in `e` (through `and`, `or` and brackets) that bounds a
    /// time from below by something moving; any other shape holding a time
    /// and something moving (`not (day < current_date - 3)`, a `case`, a
    /// `coalesce` of a comparison, `... is not true`) is taken as one:
    /// ripple orders only the plain comparisons, and refusing a job is
    /// safe where losing partitions is not.
    fn bounds(&self, e: &Expr) -> Option<(String, Option<String>)> {
        match e {
            Expr::BinaryOp {
                left,
                op: BinaryOperator::And | BinaryOperator::Or,
                right,
            } => self.bounds(left).or_else(|| self.bounds(right)),
            Expr::Nested(inner) => self.bounds(inner),
            Expr::BinaryOp {
                left,
                op:
                    op @ (BinaryOperator::Eq
                    | BinaryOperator::Gt
                    | BinaryOperator::GtEq
                    | BinaryOperator::Lt
                    | BinaryOperator::LtEq),
                right,
            } => {
                let follows = self.compare(left, op, right)?;
                Some((e.to_string(), follows))
            }
            Expr::AnyOp {
                left,
                compare_op,
                right,
                ..
            }
            | Expr::AllOp {
                left,
                compare_op,
                right,
            } => {
                let follows = self.compare(left, compare_op, right)?;
                Some((e.to_string(), follows))
            }
            Expr::Between {
                expr,
                negated: false,
                low,
                high,
            } => {
                let follows = self
                    .compare(expr, &BinaryOperator::GtEq, low)
                    .or_else(|| self.compare(expr, &BinaryOperator::LtEq, high))?;
                Some((e.to_string(), follows))
            }
            Expr::In {
                expr,
                target,
                negated: false,
                ..
            } => {
                let follows = match target {
                    InTarget::List(list) => list
                        .iter()
                        .find_map(|v| self.compare(expr, &BinaryOperator::Eq, v)),
                    InTarget::Subquery(q) => {
                        self.compare(expr, &BinaryOperator::Eq, &Expr::Subquery(q.clone()))
                    }
                    _ => None,
                }?;
                Some((e.to_string(), follows))
            }
            // A subquery's own conditions are read as its query's.
            Expr::Exists { .. } | Expr::Subquery(_) => None,
            other => self.unordered(other),
        }
    }

    /// A condition ripple does not order: a bound when it compares a time
    /// with the clock, or with another table's data.
    fn unordered(&self, e: &Expr) -> Option<(String, Option<String>)> {
        let follows = self.moving(e)?;
        let cols = columns(e);
        let time = match &follows {
            None => !cols.is_empty(),
            Some(_) => cols.iter().any(|c| time_like(c)),
        };
        time.then(|| (e.to_string(), follows))
    }

    /// Whether `left op right` bounds a time column from below (or pins
    /// it) by something moving: `Some(what it follows)`.
    fn compare(&self, left: &Expr, op: &BinaryOperator, right: &Expr) -> Option<Option<String>> {
        use BinaryOperator::{Eq, Gt, GtEq, Lt, LtEq};
        let (l, r) = (columns(left), columns(right));
        // The side reading columns, and the comparison as seen from it.
        let (side, other, op) = match (l.is_empty(), r.is_empty()) {
            (false, true) => (left, right, op.clone()),
            (true, false) => (
                right,
                left,
                match op {
                    Gt => Lt,
                    GtEq => LtEq,
                    Lt => Gt,
                    LtEq => GtEq,
                    o => o.clone(),
                },
            ),
            // Columns on both sides (a join), or on neither.
            _ => return None,
        };
        let mut moving = self.moving(other).or_else(|| self.moving(side))?;
        let clock = moving.is_none();
        let cols = if l.is_empty() { &r } else { &l };
        // Data compared with a column: a time only when a name says so.
        if !clock && !cols.iter().any(|c| time_like(c)) {
            return None;
        }
        let lower = match (op, direction(side)) {
            (Eq, _) => true,
            (Gt | GtEq, Some(up)) => up,
            (Lt | LtEq, Some(up)) => !up,
            // A shape ripple cannot order is taken as a bound: refusing a
            // job is safe, losing partitions is not.
            (Gt | GtEq | Lt | LtEq, None) => true,
            _ => false,
        };
        if !lower {
            return None;
        }
        Some(moving.take())
    }

    /// `Some(None)`: `e` reads the clock; `Some(Some(t))`: a scalar query
    /// of `e` reads table `t`, not the job's own.
    fn moving(&self, e: &Expr) -> Option<Option<String>> {
        struct Moves<'a> {
            dialect: SqlDialect,
            own: &'a str,
            depth: usize,
            found: Option<Option<String>>,
        }
        impl Visitor for Moves<'_> {
            type Break = ();
            fn pre_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
                self.depth += 1;
                ControlFlow::Continue(())
            }
            fn post_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
                self.depth -= 1;
                ControlFlow::Continue(())
            }
            fn pre_visit_relation(&mut self, name: &sqlparser::ast::ObjectName) -> ControlFlow<()> {
                if let Some(rel) = relation_name(name, self.dialect) {
                    let own = rel == self.own || self.own.ends_with(&format!(".{rel}"));
                    if !own && self.found.is_none() {
                        self.found = Some(Some(rel));
                        return ControlFlow::Break(());
                    }
                }
                ControlFlow::Continue(())
            }
            fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
                if self.depth == 0 && clock(e) {
                    self.found = Some(None);
                    return ControlFlow::Break(());
                }
                ControlFlow::Continue(())
            }
        }
        let mut m = Moves {
            dialect: self.dialect,
            own: self.own,
            depth: 0,
            found: None,
        };
        let _ = e.visit(&mut m);
        m.found
    }
}

impl Visitor for Finder<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
        if let SetExpr::Select(s) = q.body.as_ref() {
            self.condition(s.selection.as_ref());
            self.condition(s.having.as_ref());
            self.condition(s.qualify.as_ref());
            for twj in &s.from {
                for j in &twj.joins {
                    if let Some(JoinConstraint::On(on)) = join_constraint(&j.join_operator) {
                        self.condition(Some(on));
                    }
                }
            }
        }
        if self.found.is_some() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }
}

/// `now()`, `current_date`, `'today'::date`: a reading of the clock.
fn clock(e: &Expr) -> bool {
    match e {
        Expr::Identifier(i) => i.quote_style.is_none() && now_like(&i.value),
        Expr::Function(f) => f
            .name
            .0
            .last()
            .and_then(|p| p.as_ident())
            .is_some_and(|i| now_like(&i.value)),
        Expr::Value(v) => clock_word(&v.value),
        Expr::TypedString(t) => clock_word(&t.value.value),
        _ => false,
    }
}

/// PostgreSQL's words for the clock in a date or time literal.
fn clock_word(v: &Value) -> bool {
    matches!(
        v,
        Value::SingleQuotedString(s)
            if matches!(s.to_ascii_lowercase().as_str(), "now" | "today" | "yesterday" | "tomorrow")
    )
}

/// The columns `e` reads outside its subqueries (not the clock).
fn columns(e: &Expr) -> Vec<String> {
    struct Cols {
        depth: usize,
        out: Vec<String>,
    }
    impl Visitor for Cols {
        type Break = ();
        fn pre_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.depth += 1;
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.depth -= 1;
            ControlFlow::Continue(())
        }
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            if self.depth == 0 {
                match e {
                    Expr::Identifier(i) if !(i.quote_style.is_none() && now_like(&i.value)) => {
                        self.out.push(i.value.clone())
                    }
                    Expr::CompoundIdentifier(parts) => {
                        self.out.extend(parts.last().map(|p| p.value.clone()))
                    }
                    _ => {}
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut c = Cols {
        depth: 0,
        out: Vec::new(),
    };
    let _ = e.visit(&mut c);
    c.out
}

/// Whether `e` rises with the columns it reads (`Some(true)`), falls
/// (`current_date - d`: `Some(false)`), or neither ripple can tell.
fn direction(e: &Expr) -> Option<bool> {
    let has = |e: &Expr| !columns(e).is_empty();
    match e {
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => Some(true),
        Expr::Nested(inner) | Expr::Cast { expr: inner, .. } => direction(inner),
        Expr::AtTimeZone { timestamp, .. } => direction(timestamp),
        Expr::BinaryOp {
            left,
            op: BinaryOperator::Plus,
            right,
        } => match (has(left), has(right)) {
            (true, false) => direction(left),
            (false, true) => direction(right),
            _ => None,
        },
        Expr::BinaryOp {
            left,
            op: BinaryOperator::Minus,
            right,
        } => match (has(left), has(right)) {
            (true, false) => direction(left),
            (false, true) => direction(right).map(|up| !up),
            _ => None,
        },
        Expr::Function(f) if f.over.is_none() => {
            let name = f.name.to_string().to_ascii_lowercase();
            let name = name.rsplit('.').next().unwrap_or_default();
            let args = positional(&f.args);
            let with: Vec<usize> = (0..args.len()).filter(|&i| has(args[i])).collect();
            let [at] = with.as_slice() else {
                return None;
            };
            let inner = direction(args[*at])?;
            match name {
                // End minus start: (unit, start, end), or (end, start).
                "datediff" | "date_diff" | "timestampdiff" | "timestamp_diff" => {
                    let start = if args.len() == 3 {
                        1
                    } else {
                        1.min(args.len())
                    };
                    let end = if args.len() == 3 { 2 } else { 0 };
                    if *at == end {
                        Some(inner)
                    } else if *at == start {
                        Some(!inner)
                    } else {
                        None
                    }
                }
                "date" | "to_date" | "date_trunc" | "trunc" | "timestamp" | "datetime"
                | "to_timestamp" | "dateadd" | "date_add" | "date_sub" | "subdate" | "adddate"
                | "timestampadd" | "timestamp_add" | "timestamp_sub" | "coalesce" | "ifnull"
                | "nvl" | "epoch" | "epoch_ms" | "unix_seconds" | "unix_date" => Some(inner),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A call's arguments given by position.
pub(crate) fn positional(args: &FunctionArguments) -> Vec<&Expr> {
    match args {
        FunctionArguments::List(list) => list
            .args
            .iter()
            .filter_map(|a| match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bound(sql: &str) -> Option<MovingBound> {
        moving_bound(sql, SqlDialect::Postgres, "mart.daily")
    }

    #[test]
    fn clock_and_other_tables_bound_from_below() {
        for sql in [
            "insert into mart.daily select day, sum(x) from raw.o where day >= current_date - 3 group by day",
            "delete from mart.daily where day >= (select max(day) - 2 from raw.o)",
            "insert into mart.daily select * from raw.o where day between now() - interval '3 days' and now()",
            "insert into mart.daily select * from raw.o where current_date - day <= 3",
            "insert into mart.daily select * from raw.o where datediff('day', order_date, getdate()) < 7",
            "insert into mart.daily select * from raw.o where day = current_date - 1",
            "insert into mart.daily select * from raw.o o join raw.c c on c.id = o.id and o.day > 'today'::date - 3",
            "insert into mart.daily select * from (select * from raw.o where loaded_at > now() - interval '1 day') s",
            "merge into mart.daily t using raw.o s on t.day = s.day and s.day >= current_date - 2 when matched then delete",
            "insert into mart.daily select * from raw.o where day in (select max(day) from raw.o)",
            // Shapes ripple does not order are taken as bounds.
            "delete from mart.daily where not (day < current_date - 3)",
            "delete from mart.daily where day not between date '1900-01-01' and current_date - 4",
            "delete from mart.daily where (day < current_date - 3) is not true",
            "delete from mart.daily where case when day >= current_date - 3 then true else false end",
            "delete from mart.daily where coalesce(day >= current_date - 3, false)",
            "delete from mart.daily where day >= date 'today' - 3",
            "delete from mart.daily where day >= any (select max(day) - 2 from raw.o)",
            "delete from mart.daily where date_trunc('month', day) = date_trunc('month', current_date)",
        ] {
            assert!(bound(sql).is_some(), "no bound found in {sql}");
        }
        let b =
            bound("select 1; delete from mart.daily where day >= (select max(day) - 2 from raw.o)")
                .expect("bound");
        assert_eq!((b.statement, b.follows.as_deref()), (2, Some("raw.o")));
        let b = bound("insert into mart.daily select * from raw.o where day >= current_date - 3")
            .expect("bound");
        assert_eq!(b.follows, None);
        assert!(b.filter.contains("current_date"), "{}", b.filter);
    }

    #[test]
    fn upper_bounds_own_high_water_marks_and_plain_values_are_not_bounds() {
        for sql in [
            // Today's partial day left out: history stays whole.
            "insert into mart.daily select * from raw.o where day < current_date",
            "insert into mart.daily select * from raw.o where datediff('day', day, getdate()) >= 1",
            // A high-water mark read off the job's own table.
            "insert into mart.daily select * from raw.o where day > (select coalesce(max(day), '1900-01-01') from mart.daily)",
            // A value compared with other data is no time bound.
            "insert into mart.daily select * from raw.o where amount > (select avg(amount) from raw.o)",
            "insert into mart.daily select * from raw.o where customer_id in (select id from raw.c)",
            // A flag, not a filter.
            "insert into mart.daily select day, case when day >= current_date - 7 then 1 else 0 end from raw.o",
            "insert into mart.daily select * from raw.o where day >= '2020-01-01'",
        ] {
            assert_eq!(bound(sql), None, "{sql}");
        }
    }
}
