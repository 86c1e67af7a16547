//! Time facts read off a model's SQL, when they are unambiguous:
//!
//! - a window on an upstream: `u.d BETWEEN x.d - INTERVAL '6 day' AND x.d`,
//!   `u.d >= dateadd(day, -6, x.d)`, `date_sub(x.d, 6)`, `x.d - 6`, or a frame
//!   `ROWS BETWEEN 6 PRECEDING AND CURRENT ROW` over a single upstream
//!   → window `[-6, 0]` on the upstream that owns `u`;
//! - a grain: `date_trunc('week', d)` selected and grouped by in an
//!   aggregate → grain `week`.
//!
//! Each fact carries its evidence (file, line in the SQL, the expression).

use std::collections::{BTreeSet, HashMap};
use std::ops::ControlFlow;

use petgraph::Direction;
use petgraph::graph::NodeIndex;
use sqlparser::ast::{
    BinaryOperator, DateTimeField, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Select,
    Spanned, TableFactor, UnaryOperator, Value, Visit, Visitor, WindowFrameBound, WindowFrameUnits,
    WindowType,
};

use crate::cache::{Cache, KeyBuilder, Table};
use crate::graph::LineageGraph;
use crate::time::{Grain, TimeMapping};

/// What the SQL of one dataset's job says.
#[derive(Debug, Clone, Default)]
pub struct Inference {
    /// The dataset's grain, with evidence.
    pub grain: Option<(Grain, String)>,
    /// Windows on upstream datasets (by id): `lo` of `[lo, 0]` in the
    /// unit the SQL wrote (`None`: rows, i.e. the upstream's grain), and
    /// the evidence. [`Inference::window_for`] converts to a grain.
    pub windows: HashMap<String, (i64, Option<Grain>, String)>,
}

/// A window found in SQL, in the unit the SQL wrote.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct RawWindow {
    qualifier: Option<String>,
    lo: i64,
    unit: Option<Grain>,
    evidence: String,
}

/// Reads what the SQL of the job writing `n` says, if there is SQL.
pub(crate) fn infer(g: &LineageGraph, n: NodeIndex) -> Option<Inference> {
    let d = &g.graph[n];
    let job = g.writer(&d.id)?;
    let v = find(&g.cache, job.sql.as_deref()?, g.config.dialect)?;
    let file = job.file.as_str();
    let ups: Vec<NodeIndex> = g
        .graph
        .neighbors_directed(n, Direction::Incoming)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut out = Inference::default();
    let grains: BTreeSet<Grain> = v.grains.iter().map(|(g, _)| *g).collect();
    if grains.len() == 1
        && let Some((gr, ev)) = v.grains.first()
    {
        out.grain = Some((*gr, format!("inferred from SQL ({file}, SQL line {ev})")));
    }
    for w in &v.windows {
        let target = match &w.qualifier {
            Some(q) => {
                let rel = v.aliases.get(q).cloned().unwrap_or_else(|| q.clone());
                ups.iter().copied().find(|&u| {
                    let ud = &g.graph[u];
                    ud.relation == rel
                        || ud.name == rel
                        || ud.relation.rsplit('.').next() == Some(rel.as_str())
                        || rel.rsplit('.').next()
                            == Some(ud.relation.rsplit('.').next().unwrap_or_default())
                })
            }
            None if ups.len() == 1 => ups.first().copied(),
            None => None,
        };
        let Some(u) = target else { continue };
        out.windows.entry(g.graph[u].id.clone()).or_insert((
            w.lo,
            w.unit,
            format!("inferred from SQL ({file}, SQL line {})", w.evidence),
        ));
    }
    if out.grain.is_none() && out.windows.is_empty() {
        return None;
    }
    Some(out)
}

/// The windows and grains `sql` spells; `None` when it does not parse.
/// What it finds depends on the text and the dialect only, so it is kept
/// in the warm cache under them.
fn find(cache: &Cache, sql: &str, dialect: crate::sql::SqlDialect) -> Option<Finder> {
    // Parsing is the whole cost of time facts; SQL without a single token
    // any fact is made of cannot give one (and costs less to check again
    // than to look up).
    if !could_hold_evidence(sql) {
        return Some(Finder::default());
    }
    let key = || KeyBuilder::default().str(sql).str(dialect.name()).finish();
    cache.remember(Table::TimeFacts, key, || parse_and_find(sql, dialect))
}

/// [`find`] without its pre-check: every statement parsed and visited.
fn parse_and_find(sql: &str, dialect: crate::sql::SqlDialect) -> Option<Finder> {
    crate::sql::with_statements(sql, dialect, |statements| {
        let mut v = Finder::default();
        for s in statements.iter() {
            let _ = s.visit(&mut v);
        }
        v
    })
    .ok()
}

/// Whether `sql` holds what every fact [`Finder`] finds is made of: a grain
/// needs `date_trunc`; a frame window `PRECEDING`; any other window a
/// comparison (`BETWEEN`, `>`, `>=`) against an offset (`-`, `INTERVAL`, or
/// one of the date functions [`minus_offset`] knows). Names are compared as
/// written, unquoted, so a plain substring test cannot miss one.
fn could_hold_evidence(sql: &str) -> bool {
    let lower = sql.to_ascii_lowercase();
    let has = |w: &str| lower.contains(w);
    has("date_trunc")
        || has("preceding")
        || ((has("between") || has(">"))
            && (has("-")
                || has("interval")
                || has("dateadd")
                || has("date_add")
                || has("timestampadd")
                || has("date_sub")
                || has("datesub")
                || has("subdate")))
}

impl Inference {
    /// The window on `upstream` converted to `upstream_grain`, if the SQL's
    /// unit converts exactly.
    pub fn window_for(
        &self,
        upstream: &str,
        upstream_grain: Grain,
    ) -> Option<(TimeMapping, String)> {
        let (lo, unit, why) = self.windows.get(upstream)?;
        let factor = match unit {
            None => 1,
            Some(u) => u.ratio(upstream_grain)?,
        };
        Some((TimeMapping::Window(lo * factor, 0), why.clone()))
    }
}

#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Finder {
    aliases: HashMap<String, String>,
    windows: Vec<RawWindow>,
    grains: Vec<(Grain, String)>,
}

impl Visitor for Finder {
    type Break = ();

    fn pre_visit_table_factor(&mut self, t: &TableFactor) -> ControlFlow<()> {
        if let TableFactor::Table { name, alias, .. } = t {
            let rel = name
                .to_string()
                .replace(['"', '`', '[', ']'], "")
                .to_lowercase();
            if let Some(a) = alias {
                self.aliases
                    .insert(a.name.value.to_lowercase(), rel.clone());
            }
            if let Some(last) = rel.rsplit('.').next() {
                self.aliases.entry(last.to_string()).or_insert(rel.clone());
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_select(&mut self, s: &Select) -> ControlFlow<()> {
        let grouped = match &s.group_by {
            sqlparser::ast::GroupByExpr::All(_) => true,
            sqlparser::ast::GroupByExpr::Expressions(e, _) => !e.is_empty(),
        };
        if grouped {
            let mut exprs: Vec<&Expr> = Vec::new();
            for item in &s.projection {
                match item {
                    sqlparser::ast::SelectItem::UnnamedExpr(e)
                    | sqlparser::ast::SelectItem::ExprWithAlias { expr: e, .. } => exprs.push(e),
                    _ => {}
                }
            }
            if let sqlparser::ast::GroupByExpr::Expressions(e, _) = &s.group_by {
                exprs.extend(e.iter());
            }
            for e in exprs {
                if let Some(gr) = date_trunc_grain(strip(e)) {
                    self.grains
                        .push((gr, format!("{}: `{}`", line(e), shorten(e))));
                }
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        match e {
            Expr::Between {
                expr,
                negated: false,
                low,
                high,
            } => {
                if let Some((base, n, unit)) = minus_offset(low)
                    && same(base, high)
                {
                    self.push_window(expr, n, unit, e);
                }
            }
            Expr::BinaryOp {
                left,
                op: op @ (BinaryOperator::GtEq | BinaryOperator::Gt),
                right,
            } => {
                if let Some((_, n, unit)) = minus_offset(right) {
                    let n = if *op == BinaryOperator::Gt { n - 1 } else { n };
                    self.push_window(left, n, unit, e);
                }
            }
            Expr::Function(f) => {
                if let Some(WindowType::WindowSpec(spec)) = &f.over
                    && let Some(frame) = &spec.window_frame
                    && frame.units == WindowFrameUnits::Rows
                    && let WindowFrameBound::Preceding(Some(n)) = &frame.start_bound
                    && matches!(frame.end_bound, None | Some(WindowFrameBound::CurrentRow))
                    && let Some(n) = literal_int(n)
                {
                    self.windows.push(RawWindow {
                        qualifier: None,
                        lo: -n,
                        unit: None,
                        evidence: format!("{}: `{}`", line(e), shorten(e)),
                    });
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

impl Finder {
    fn push_window(&mut self, column: &Expr, n: i64, unit: Option<Grain>, whole: &Expr) {
        if n < 0 {
            return;
        }
        self.windows.push(RawWindow {
            qualifier: qualifier(strip(column)),
            lo: -n,
            unit,
            evidence: format!("{}: `{}`", line(whole), shorten(whole)),
        });
    }
}

fn line(e: &Expr) -> u64 {
    e.span().start.line
}

fn shorten(e: &Expr) -> String {
    let s = e.to_string();
    if s.chars().count() > 80 {
        format!("{}…", s.chars().take(80).collect::<String>())
    } else {
        s
    }
}

/// Casts and parentheses do not change which column is meant.
fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::Cast { expr, .. } | Expr::Nested(expr) => strip(expr),
        other => other,
    }
}

fn qualifier(e: &Expr) -> Option<String> {
    match e {
        Expr::CompoundIdentifier(parts) if parts.len() >= 2 => {
            Some(parts[parts.len() - 2].value.to_lowercase())
        }
        _ => None,
    }
}

/// Two expressions that print the same, ignoring case.
fn same(a: &Expr, b: &Expr) -> bool {
    strip(a)
        .to_string()
        .eq_ignore_ascii_case(&strip(b).to_string())
}

/// `x - INTERVAL 'n unit'`, `dateadd(unit, -n, x)`, `date_add(x, -n)`,
/// `date_sub(x, n)`, `x - n` → (x, n, unit).
fn minus_offset(e: &Expr) -> Option<(&Expr, i64, Option<Grain>)> {
    match strip(e) {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::Minus,
            right,
        } => {
            if let Some((n, unit)) = interval(right) {
                return Some((left, n, unit));
            }
            literal_int(right).map(|n| (left.as_ref(), n, Some(Grain::Day)))
        }
        Expr::BinaryOp {
            left,
            op: BinaryOperator::Plus,
            right,
        } => {
            let (n, unit) = interval(right)?;
            (n < 0).then_some((left.as_ref(), -n, unit))
        }
        Expr::Function(f) => {
            let name = f.name.to_string().to_lowercase();
            let args = positional(&f.args);
            match (name.as_str(), args.as_slice()) {
                ("dateadd" | "date_add" | "timestampadd", [unit, n, base])
                    if literal_int(n).is_some() =>
                {
                    let n = literal_int(n)?;
                    (n < 0).then_some((*base, -n, unit_of(unit)))
                }
                ("date_add" | "dateadd", [base, n]) => {
                    let (n, unit) =
                        interval(n).or_else(|| literal_int(n).map(|n| (n, Some(Grain::Day))))?;
                    (n < 0).then_some((*base, -n, unit))
                }
                ("date_sub" | "datesub" | "subdate", [base, n]) => {
                    let (n, unit) =
                        interval(n).or_else(|| literal_int(n).map(|n| (n, Some(Grain::Day))))?;
                    Some((*base, n, unit))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

fn positional(args: &FunctionArguments) -> Vec<&Expr> {
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

/// `INTERVAL '6 day'`, `INTERVAL '6' DAY`, `INTERVAL 6 DAY` → (6, day).
fn interval(e: &Expr) -> Option<(i64, Option<Grain>)> {
    let Expr::Interval(iv) = strip(e) else {
        return None;
    };
    if let Some(field) = &iv.leading_field {
        return Some((literal_int(&iv.value)?, field_grain(field)));
    }
    let Expr::Value(v) = iv.value.as_ref() else {
        return None;
    };
    let Value::SingleQuotedString(s) = &v.value else {
        return None;
    };
    let mut words = s.split_whitespace();
    let n: i64 = words.next()?.parse().ok()?;
    let unit = words.next().and_then(unit_word);
    Some((n, unit))
}

fn field_grain(f: &DateTimeField) -> Option<Grain> {
    unit_word(&f.to_string())
}

fn unit_word(w: &str) -> Option<Grain> {
    match w
        .trim_matches(['\'', '"'])
        .to_lowercase()
        .trim_end_matches('s')
    {
        "hour" => Some(Grain::Hour),
        "day" => Some(Grain::Day),
        "week" => Some(Grain::Week),
        "month" => Some(Grain::Month),
        "year" => Some(Grain::Year),
        _ => None,
    }
}

fn unit_of(e: &Expr) -> Option<Grain> {
    match strip(e) {
        Expr::Identifier(i) => unit_word(&i.value),
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) => unit_word(s),
            _ => None,
        },
        _ => None,
    }
}

fn literal_int(e: &Expr) -> Option<i64> {
    match strip(e) {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => n.parse().ok(),
            Value::SingleQuotedString(s) => s.trim().parse().ok(),
            _ => None,
        },
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => literal_int(expr).map(|n| -n),
        _ => None,
    }
}

/// `date_trunc('week', d)` (or BigQuery's `date_trunc(d, week)`) → week.
fn date_trunc_grain(e: &Expr) -> Option<Grain> {
    let Expr::Function(f) = e else { return None };
    if !f.name.to_string().eq_ignore_ascii_case("date_trunc") {
        return None;
    }
    let args = positional(&f.args);
    match args.as_slice() {
        [a, b] => unit_of(a).or_else(|| unit_of(b)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::SqlDialect;

    fn finds_something(sql: &str, dialect: SqlDialect) -> bool {
        parse_and_find(sql, dialect).is_some_and(|v| !v.windows.is_empty() || !v.grains.is_empty())
    }

    #[test]
    fn every_form_of_evidence_passes_the_pre_check() {
        let forms = [
            "select * from u join x on u.d BETWEEN x.d - INTERVAL '6 day' AND x.d",
            "select * from u where u.d >= DATEADD(day, -6, current_date)",
            "select * from u where u.d > date_sub(current_date, 6)",
            "select * from u where u.d >= subdate(current_date, 6)",
            "select * from u where u.d >= current_date + interval '-6 day'",
            "select * from u where u.d >= current_date-6",
            "select sum(v) over (order by d ROWS BETWEEN 6 PRECEDING AND CURRENT ROW) from u",
            "select DATE_TRUNC('week', d), count(*) from u group by 1",
        ];
        for sql in forms {
            assert!(
                finds_something(sql, SqlDialect::Generic),
                "no fact in {sql}"
            );
            assert!(could_hold_evidence(sql), "pre-check drops {sql}");
        }
    }

    #[test]
    fn sql_without_an_offset_or_a_grain_is_not_parsed() {
        for sql in [
            "select a, b from t where c = 1",
            "select a from t where d >= current_date",
            "select a - b from t",
        ] {
            assert!(!finds_something(sql, SqlDialect::Generic), "{sql}");
            assert!(!could_hold_evidence(sql), "{sql}");
        }
    }

    /// Every SQL file of the fixtures: a fact found means the pre-check
    /// let it through.
    #[test]
    fn the_pre_check_never_drops_a_fact_in_the_fixtures() {
        let mut stack = vec![std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")];
        let mut files = 0;
        let mut with_facts = 0;
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "sql")
                    && let Ok(sql) = std::fs::read_to_string(&path)
                {
                    files += 1;
                    for dialect in [
                        SqlDialect::Generic,
                        SqlDialect::Postgres,
                        SqlDialect::Snowflake,
                    ] {
                        if finds_something(&sql, dialect) {
                            with_facts += 1;
                            assert!(could_hold_evidence(&sql), "{}", path.display());
                        }
                    }
                }
            }
        }
        assert!(
            files > 20 && with_facts > 0,
            "{files} files, {with_facts} with facts"
        );
    }
}
