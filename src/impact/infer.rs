//! Time facts read off a model's SQL, when they are unambiguous:
//!
//! - a window on an upstream: `u.d BETWEEN x.d - INTERVAL '6 day' AND x.d`,
//!   `u.d >= dateadd(day, -6, x.d)`, `date_sub(x.d, 6)`, `x.d - 6`, or a frame
//!   `ROWS BETWEEN 6 PRECEDING AND CURRENT ROW` over a single upstream
//!   → window `[-6, 0]` on the upstream that owns `u`;
//! - a window function reading other rows in time: `lag(v, 7)` → `[-7, 0]`,
//!   `lead(v)` → `[0, 1]`, a `rows`/`range` frame (`interval '6 days'
//!   preceding` → `[-6, 0]` days), a running total (`unbounded preceding`, or
//!   an `order by` with the default frame) → everything after, a window
//!   partitioned by `date_trunc('month', d)` → the rest of its month; a
//!   self-join on a shifted date (`b.d = a.d - interval '7 days'`) →
//!   `[-7, 0]`. Every window includes the partition itself;
//! - a grain: `date_trunc('week', d)` selected and grouped by in an
//!   aggregate → grain `week`.
//!
//! Each fact carries its evidence (file, line in the SQL, the expression).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::ControlFlow;

use petgraph::Direction;
use petgraph::graph::NodeIndex;
use sqlparser::ast::{
    BinaryOperator, DateTimeField, Expr, Select, Spanned, TableFactor, UnaryOperator, Value, Visit,
    Visitor, WindowFrameUnits, WindowType,
};

use crate::cache::{Cache, KeyBuilder, Table};
use crate::graph::LineageGraph;
use crate::sql::{now_like, positional, time_like};
use crate::time::{Grain, TimeMapping};

/// What the SQL of one dataset's job says.
#[derive(Debug, Clone, Default)]
pub struct Inference {
    /// The dataset's grain, with evidence.
    pub grain: Option<(Grain, String)>,
    /// Windows on upstream datasets (by id): every reach the SQL spells
    /// on that upstream, `[lo, hi]` (lo ≤ 0 ≤ hi) in the unit it wrote
    /// (`None`: rows), with evidence. [`Inference::window_for`] adds them
    /// up: windows nested in one job (a `lag` over a rolling sum) reach as
    /// far as their sum.
    pub windows: HashMap<String, Vec<Window>>,
    /// The zone its times are converted into (`at time zone 'X'`,
    /// `timezone('X', ts)`), with evidence; `None` inside: several.
    pub zone: Option<(Option<String>, String)>,
    /// The times it selects, output name to the column they are of (both
    /// lowercase): `d` → `d`, `cast(created_at as date) as order_date` →
    /// `created_at`; aggregates (`max(loaded_at)`) are no such time.
    pub time_sources: BTreeMap<String, String>,
    /// It cuts times into days or parts in the session's zone (no zone
    /// named at the cut): what the plan's session-zone check is for.
    pub session_cut: bool,
    /// Where the job moves its session's zone in a way the plan cannot
    /// check before it runs (set after other statements, `set local`,
    /// reset): the statement, with its line.
    pub zone_moved: Option<String>,
}

/// A reach in time as the SQL wrote it: `[lo, hi]` units (`None`: rows of
/// the upstream, i.e. its partitions), with the evidence.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Window {
    /// Units back (negative or zero).
    pub lo: i64,
    /// Units ahead (positive or zero).
    pub hi: i64,
    /// The unit (`None`: the upstream's partitions).
    pub unit: Option<Grain>,
    /// Where it was read.
    pub evidence: String,
}

/// So many units that a window reaching that far reaches everything (see
/// [`crate::time::REACH_ALL`]).
pub const UNBOUNDED: i64 = crate::time::REACH_ALL;

/// A window found in SQL, in the unit the SQL wrote.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct RawWindow {
    qualifier: Option<String>,
    lo: i64,
    hi: i64,
    unit: Option<Grain>,
    evidence: String,
    /// The columns the rows are grouped or window-partitioned by, when none
    /// reads as a time by its name: if one is an upstream's partition
    /// column (`group by "Order Day"`, a text key `dk`), each group stays in
    /// one of its partitions and the window does not apply.
    #[serde(default)]
    unless_keyed_by: Vec<String>,
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
    if let Some((_, ev)) = v.grains.iter().find(|(g, _)| *g == Grain::None) {
        out.grain = Some((
            Grain::None,
            format!(
                "inferred from SQL ({file}, SQL line {ev}): periods ripple has no grain for, rebuilt whole"
            ),
        ));
    } else if grains.len() == 1
        && let Some((gr, ev)) = v.grains.first()
    {
        out.grain = Some((*gr, format!("inferred from SQL ({file}, SQL line {ev})")));
    }
    // Upstreams' partition columns, read only for a window keyed by
    // columns whose names do not say time (rare: it costs their SQL).
    let mut keys: Option<Vec<String>> = None;
    for w in &v.windows {
        if !w.unless_keyed_by.is_empty() {
            let keys = keys.get_or_insert_with(|| {
                let mut columns = super::partition::PartitionColumns::default();
                ups.iter()
                    .filter(|&&u| u != n)
                    .filter_map(|&u| columns.of(g, u))
                    .map(|p| crate::sql::rewrite::unquote_ident(&p.column))
                    .collect()
            });
            let keyed = w
                .unless_keyed_by
                .iter()
                .any(|c| keys.iter().any(|k| k.eq_ignore_ascii_case(c)));
            if keyed {
                continue;
            }
        }
        // The upstreams the window reads: those its qualifier names (a
        // name a search path leaves open names several); unqualified, or
        // naming none of them, every upstream: a window is never dropped.
        let named: Vec<NodeIndex> = match &w.qualifier {
            Some(q) => {
                let rel = v.aliases.get(q).cloned().unwrap_or_else(|| q.clone());
                ups.iter()
                    .copied()
                    .filter(|&u| {
                        let ud = &g.graph[u];
                        ud.relation == rel
                            || ud.name == rel
                            || ud.relation.rsplit('.').next() == Some(rel.as_str())
                            || rel.rsplit('.').next()
                                == Some(ud.relation.rsplit('.').next().unwrap_or_default())
                    })
                    .collect()
            }
            None => Vec::new(),
        };
        let targets = if named.is_empty() { &ups } else { &named };
        let evidence = format!("inferred from SQL ({file}, SQL line {})", w.evidence);
        let found = Window {
            lo: w.lo.min(0),
            hi: w.hi.max(0),
            unit: w.unit,
            evidence,
        };
        for &u in targets {
            let all = out.windows.entry(g.graph[u].id.clone()).or_default();
            if !all.contains(&found) {
                all.push(found.clone());
            }
        }
    }
    // A session zone set once, first, is the one the job's casts cut in;
    // otherwise which zone is in force is not the SQL's to say.
    let session: &[(String, String)] = match v.zone_unclear() {
        true => &[],
        false => &v.session_zones,
    };
    let all: Vec<&(String, String)> = v.zones.iter().chain(session).collect();
    let zones: BTreeSet<&str> = all.iter().map(|(z, _)| z.as_str()).collect();
    if let Some((z, ev)) = all.first() {
        let evidence = format!("inferred from SQL ({file}, SQL line {ev})");
        out.zone = Some(((zones.len() == 1).then(|| z.clone()), evidence));
    }
    out.time_sources = v.time_sources.clone();
    out.session_cut = v.session_cut;
    out.zone_moved = v.zone_moved();
    if out.grain.is_none()
        && out.windows.is_empty()
        && out.zone.is_none()
        && out.time_sources.is_empty()
        && !out.session_cut
        && out.zone_moved.is_none()
    {
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
    crate::sql::with_located_statements(sql, dialect, |statements, lines| {
        let mut v = Finder::default();
        for (s, &line) in statements.iter().zip(lines) {
            v.line = line;
            let _ = s.visit(&mut v);
        }
        v
    })
    .ok()
}

/// Whether `sql` holds what every fact [`Finder`] finds is made of: a grain
/// needs `date_trunc`; a frame window `PRECEDING`; any other window a
/// comparison (`BETWEEN`, `>`, `>=`) against an offset (`-`, `INTERVAL`, or
/// one of the date functions [`minus_offset`] knows); a table joined, or
/// read in a subquery, beside the one whose times are kept, and `distinct
/// on`, reach all of time. Names are compared as written, unquoted, so a
/// plain substring test cannot miss one.
fn could_hold_evidence(sql: &str) -> bool {
    let lower = sql.to_ascii_lowercase();
    let has = |w: &str| lower.contains(w);
    has("date_trunc")
        || has("recursive")
        || [
            "min(",
            "max(",
            "count(",
            "sum(",
            "avg(",
            "date_add(",
            "dateadd(",
        ]
        .iter()
        .any(|f| has(f))
        || has("zone")
        || has("group")
        || has("<")
        || has(">")
        || has("strftime")
        || has("to_char")
        || has("format_date")
        || has("date_format")
        || has("from_utc_timestamp")
        || has("+")
        || has(" - ")
        || has("preceding")
        || has("over")
        || has("date_diff")
        || has("datediff")
        || has("cast")
        || has("::date")
        || has("date(")
        || has("extract")
        || has("date_part")
        || has("datepart")
        || has("time_bucket")
        || has("distinct")
        || has("join")
        || has("exists")
        || has(" in ")
        || has(" in(")
        || ((has("between") || has(">") || has("=") || has("<"))
            && (has("-")
                || has("+")
                || has("interval")
                || has("dateadd")
                || has("date_add")
                || has("timestampadd")
                || has("date_sub")
                || has("datesub")
                || has("subdate")))
}

/// `n` units as hours, taking each unit at its longest (a row: a year).
fn reach_hours(n: i64, unit: Option<Grain>) -> i64 {
    if n.abs() >= UNBOUNDED {
        return n.signum() * UNBOUNDED;
    }
    let longest = match unit {
        Some(Grain::Hour) => 1,
        Some(Grain::Day) => 25,
        Some(Grain::Week) => 7 * 25,
        Some(Grain::Month) => 31 * 25,
        Some(Grain::Year | Grain::None) | None => 366 * 25,
    };
    (n * longest).clamp(-UNBOUNDED, UNBOUNDED)
}

/// `n` units (`unit`) as partitions of `grain`, rounded away from zero: a
/// reach that does not divide evenly is widened, never cut short.
fn reach_in(n: i64, unit: Option<Grain>, grain: Grain) -> i64 {
    if n == 0 {
        return 0;
    }
    if n.abs() >= UNBOUNDED {
        return n.signum() * UNBOUNDED;
    }
    let Some(unit) = unit else { return n };
    // Days and longer in hours are not a fixed ratio: a daylight saving
    // day has 25.
    if let Some(f) = unit.ratio(grain)
        && (grain != Grain::Hour || unit == Grain::Hour)
    {
        return n * f;
    }
    // The shortest partition of `grain`, in hours (a DST day has 23).
    let shortest = match grain {
        Grain::Hour => 1,
        Grain::Day => 23,
        Grain::Week => 7 * 24 - 1,
        Grain::Month => 28 * 24 - 1,
        Grain::Year | Grain::None => 365 * 24 - 1,
    };
    let h = reach_hours(n, Some(unit)).abs();
    // One more: a reach from inside a partition crosses one more boundary.
    n.signum() * ((h + shortest - 1) / shortest + 1)
}

impl Inference {
    /// The windows on `upstream` in partitions of `upstream_grain`, added
    /// up, widened where the SQL's unit does not divide them. Rows are the
    /// upstream's partitions, or the job's own where it aggregates to a
    /// coarser grain first (a `lag` over monthly sums counts months).
    pub fn window_for(
        &self,
        upstream: &str,
        upstream_grain: Grain,
    ) -> Option<(TimeMapping, String)> {
        let all = self.windows.get(upstream)?;
        let rank = |g: Grain| match g {
            Grain::Hour => 0,
            Grain::Day => 1,
            Grain::Week => 2,
            Grain::Month => 3,
            Grain::Year | Grain::None => 4,
        };
        let rows = match &self.grain {
            Some((g, _)) if rank(*g) > rank(upstream_grain) => Some(*g),
            _ => None,
        };
        let (mut lo, mut hi) = (0i64, 0i64);
        for w in all {
            let unit = w.unit.or(rows);
            lo = (lo + reach_in(w.lo, unit, upstream_grain)).max(-UNBOUNDED);
            hi = (hi + reach_in(w.hi, unit, upstream_grain)).min(UNBOUNDED);
        }
        let evidence = all
            .iter()
            .map(|w| w.evidence.as_str())
            .collect::<Vec<_>>()
            .join("; ");
        Some((TimeMapping::Window(lo, hi), evidence))
    }
}

#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Finder {
    aliases: HashMap<String, String>,
    windows: Vec<RawWindow>,
    grains: Vec<(Grain, String)>,
    zones: Vec<(String, String)>,
    /// Zones the job sets its session to (`set time zone 'X'`), kept only
    /// when set once, first, and never reset: see `zone_unclear`.
    #[serde(default)]
    session_zones: Vec<(String, String)>,
    /// The line the statement being visited starts on.
    #[serde(skip)]
    line: u64,
    /// It cuts a time into days, or reads its parts, without naming a zone
    /// (`cast(ts as date)`, `date_trunc('day', ts)`, `extract(...)`): on an
    /// instant that cut is the session's zone's.
    #[serde(default)]
    session_cut: bool,
    /// Which zone the statement being visited runs in.
    #[serde(default)]
    in_force: InForce,
    /// A `set local` zone in force until the transaction ends, with where.
    #[serde(default)]
    local: Option<String>,
    /// Work ran in the session's starting zone (the one the plan checks).
    #[serde(default)]
    worked_start: bool,
    /// Work ran in the zone the job set first.
    #[serde(default)]
    worked_first: bool,
    /// The first reset back to the starting zone, with where.
    #[serde(default)]
    reset_at: Option<String>,
    /// The first work run in a zone the job moved to where a check before
    /// the run cannot see it, with the statement that moved it.
    #[serde(default)]
    moved_at: Option<String>,
    time_sources: BTreeMap<String, String>,
    /// Per select being visited: the windows found before it, and the
    /// tables it compares with its key's time by more than an equality
    /// (with where), which must get a window by its end or reach all of
    /// time.
    #[serde(skip)]
    time_joins: Vec<(usize, Vec<(String, String)>)>,
}

/// The zone a job's statement runs in, as far as its SQL says.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
enum InForce {
    /// The session's, as the run started (the plan checks it).
    #[default]
    Start,
    /// The one the job set before any work.
    First,
    /// One the job set after work began, with where.
    Moved(String),
}

impl Finder {
    /// A statement other than a setting has run (a zone set after it is
    /// not in force for it): in whichever zone, it is counted there.
    fn worked(&self) -> bool {
        self.worked_start || self.worked_first || self.moved_at.is_some()
    }

    /// Whether the zone the job's casts cut in is not the one it set first
    /// (set after work, `set local`, reset, `discard`): it is then the
    /// session's, which the plan checks.
    fn zone_unclear(&self) -> bool {
        self.moved_at.is_some() || self.worked_start || !self.worked_first
    }

    /// Where the job's work runs in a zone no check before the run sees:
    /// moved after work began, or some work in the zone it set first and
    /// some after a reset.
    fn zone_moved(&self) -> Option<String> {
        self.moved_at.clone().or_else(|| {
            (self.worked_start && self.worked_first)
                .then(|| self.reset_at.clone())
                .flatten()
        })
    }
}

impl Visitor for Finder {
    type Break = ();

    fn pre_visit_query(&mut self, q: &sqlparser::ast::Query) -> ControlFlow<()> {
        // A recursive CTE carries values from row to row as far as it
        // recurses (a running balance day after day): all of time.
        if let Some(w) = &q.with
            && w.recursive
        {
            self.push_all_of_time(None, format!("{}: `with recursive`", q.span().start.line));
        }
        // `lateral (... order by ordered_at desc limit 1)`, a top-N: the
        // rows kept are the first of all the query reads, which a row of any
        // day can displace (round 29: a customer's latest order lost moved
        // its row to an earlier day, outside an identity impact).
        if q.limit_clause.is_some() || q.fetch.is_some() {
            self.push_all_of_time(
                None,
                format!(
                    "{}: `limit` keeps the first rows of what the query reads, which rows of any day can displace",
                    q.span().start.line
                ),
            );
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_statement(&mut self, st: &sqlparser::ast::Statement) -> ControlFlow<()> {
        use sqlparser::ast::{Set, Statement};
        // The job's session zone: `cast(ts as date)` after it cuts days there.
        let (zone, local) = match st {
            Statement::Set(Set::SetTimeZone { value, local }) => (text_literal(value), *local),
            Statement::Set(Set::SingleAssignment {
                variable,
                values,
                scope,
                ..
            }) if matches!(
                variable.to_string().to_ascii_lowercase().as_str(),
                "timezone" | "time_zone"
            ) =>
            {
                (
                    values.first().and_then(text_literal),
                    scope.is_some_and(|s| s.to_string().eq_ignore_ascii_case("local")),
                )
            }
            _ => (None, false),
        };
        let text = || st.to_string().to_ascii_lowercase();
        // `SET` has no place in the parse tree: its statement's line.
        let line = match st.span().start.line {
            0 => self.line,
            l => l,
        };
        let at = || format!("line {line}: `{st}`");
        if let Some(z) = zone {
            if local {
                self.local = Some(at());
            } else if self.worked() || matches!(self.in_force, InForce::Moved(_)) {
                self.in_force = InForce::Moved(at());
            } else {
                self.in_force = InForce::First;
                self.session_zones.push((z, format!("{line}: `{st}`")));
            }
        } else if matches!(st, Statement::Discard { .. })
            || (text().starts_with("reset") && text().contains("time"))
        {
            self.in_force = InForce::Start;
            self.local = None;
            self.reset_at.get_or_insert_with(at);
        } else if matches!(st, Statement::Commit { .. } | Statement::Rollback { .. }) {
            self.local = None;
        } else if !matches!(st, Statement::Set(_) | Statement::StartTransaction { .. })
            && !defines_only(st)
        {
            match (&self.local, &self.in_force) {
                (Some(set), _) | (None, InForce::Moved(set)) => {
                    self.moved_at.get_or_insert_with(|| set.clone());
                }
                (None, InForce::First) => self.worked_first = true,
                (None, InForce::Start) => self.worked_start = true,
            }
        }
        ControlFlow::Continue(())
    }

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

    fn post_visit_select(&mut self, _: &Select) -> ControlFlow<()> {
        // SQL that reads across rows in time is never taken as identity: a
        // table compared with the key's time in a way no window was read
        // from reaches all of time.
        if let Some((before, pending)) = self.time_joins.pop() {
            for (q, evidence) in pending {
                let windowed = self.windows[before.min(self.windows.len())..]
                    .iter()
                    .any(|w| w.qualifier.as_deref() == Some(q.as_str()));
                if !windowed {
                    self.push_all_of_time(
                        Some(q),
                        format!("{evidence}: compared with the key's time in a way ripple reads no window from"),
                    );
                }
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_select(&mut self, s: &Select) -> ControlFlow<()> {
        for item in &s.projection {
            let (e, alias) = match item {
                sqlparser::ast::SelectItem::UnnamedExpr(e) => (e, None),
                sqlparser::ast::SelectItem::ExprWithAlias { expr, alias } => (expr, Some(alias)),
                _ => continue,
            };
            if let Some(b) = base_of(e)
                && !aggregates_or_windows(e)
                && (time_expr(b)
                    || cast_to_date(e).is_some()
                    || date_trunc_grain(strip(e)).is_some())
            {
                let source = last_ident(b).to_ascii_lowercase();
                let output = alias.map_or_else(|| source.clone(), |a| a.value.to_ascii_lowercase());
                if !source.is_empty() {
                    self.time_sources.insert(output, source);
                }
            }
        }
        // A time shifted as it is selected (`d + 1 as report_date`) puts
        // rows of one day in another's partition; read both ways, it also
        // covers a join on the shifted column further up.
        for item in &s.projection {
            let (sqlparser::ast::SelectItem::UnnamedExpr(e)
            | sqlparser::ast::SelectItem::ExprWithAlias { expr: e, .. }) = item
            else {
                continue;
            };
            if let Some(base) = shifted_time(e)
                && !iso_week_start(e)
            {
                match (shift_inside(e), trunc_inside(e)) {
                    (Some((n, unit, _)), None) => self.push_both(&[base], n, unit, e),
                    // Truncated as well (`date_trunc('week', d + 1) - 1`: a
                    // Sunday week; `date_trunc('day', ts - interval '5
                    // hours')`), a row moves as far as a period more.
                    (Some((n, unit, _)), Some(period)) => {
                        let hours = reach_hours(n.abs(), unit) + reach_hours(1, Some(period));
                        self.push_both(&[base], hours, Some(Grain::Hour), e);
                    }
                    // `d - dayofweek(d)`: moved by an amount ripple cannot
                    // bound, so as far as time goes.
                    _ => self.push_both(&[base], UNBOUNDED, None, e),
                }
            }
        }
        self.time_joins.push((self.windows.len(), Vec::new()));
        self.open_comparisons(s);
        self.keys_of_another_table(s);
        // `distinct on (customer_id) ... order by customer_id, d` keeps one
        // row per key, as `row_number() over (partition by customer_id
        // order by d) = 1` does: a row of any day can replace it.
        if let Some(sqlparser::ast::Distinct::On(on)) = &s.distinct
            && !on.iter().any(|e| base_of(e).is_some_and(time_expr))
        {
            self.push_all_of_time(
                None,
                format!(
                    "{}: `distinct on` a key that is not time keeps one row per key, from any day",
                    s.span().start.line
                ),
            );
        }
        // An aggregate over a whole input, grouped by nothing (`select
        // max(d) - 7 from raw.events` in a filter, a share of a total):
        // every row it reads, whatever its day, can change it.
        let ungrouped = match &s.group_by {
            sqlparser::ast::GroupByExpr::All(_) => false,
            sqlparser::ast::GroupByExpr::Expressions(e, _) => e.is_empty(),
        };
        let aggregates = s.projection.iter().any(|i| match i {
            sqlparser::ast::SelectItem::UnnamedExpr(e)
            | sqlparser::ast::SelectItem::ExprWithAlias { expr: e, .. } => aggregates_only(e),
            _ => false,
        });
        if ungrouped && aggregates {
            let from = match s.from.as_slice() {
                [t] if t.joins.is_empty() => match &t.relation {
                    TableFactor::Table { name, alias, .. } => Some(
                        alias
                            .as_ref()
                            .map_or_else(|| name.to_string(), |a| a.name.value.clone())
                            .replace(['"', '`', '[', ']'], "")
                            .to_lowercase(),
                    ),
                    _ => None,
                },
                _ => None,
            };
            self.push_all_of_time(
                from,
                format!(
                    "{}: an aggregate over all of its input (grouped by nothing)",
                    s.span().start.line
                ),
            );
        }
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
            // Grouped by nothing that is time (`group by user_id`, a
            // session number): a group gathers its rows from any day, and
            // what it outputs (`min(activity_date)`) can land on any.
            if !grouped_by_time(s) {
                self.windows.push(RawWindow {
                    qualifier: None,
                    lo: -UNBOUNDED,
                    hi: UNBOUNDED,
                    unit: None,
                    evidence: format!(
                        "{}: grouped by no time (`{}`): each group reads all of time; if it groups by a partition column under another name, declare `partition_column` (or `upstream:`) in ripple.yml",
                        s.span().start.line,
                        shorten_group(s)
                    ),
                    unless_keyed_by: group_columns(s),
                });
            }
            for e in exprs {
                // `date_trunc('quarter', d)`: periods no grain of ripple's
                // is; the dataset is rebuilt whole rather than cut by day.
                if odd_trunc(e) {
                    self.grains
                        .push((Grain::None, format!("{}: `{}`", line(e), shorten(e))));
                    continue;
                }
                if let Some(gr) = date_trunc_grain(strip(e))
                    .or_else(|| cast_to_date(e))
                    .or_else(|| format_grain(strip(e)))
                {
                    self.grains
                        .push((gr, format!("{}: `{}`", line(e), shorten(e))));
                }
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        if !self.session_cut && cuts_in_session_zone(e) {
            self.session_cut = true;
        }
        match e {
            Expr::BinaryOp {
                left,
                op:
                    BinaryOperator::Eq
                    | BinaryOperator::Lt
                    | BinaryOperator::LtEq
                    | BinaryOperator::Gt
                    | BinaryOperator::GtEq,
                right,
            } if date_diff(left).is_some() || date_diff(right).is_some() => {
                // `date_diff('day', b.d, a.d) <= 30`: either side, that far.
                let (diff, n) = match date_diff(left) {
                    Some(d) => (d, literal_int(right)),
                    None => (
                        date_diff(right).unwrap_or((None, left, right)),
                        literal_int(left),
                    ),
                };
                let (unit, x, y) = diff;
                self.push_both(&[x, y], n.map_or(UNBOUNDED, i64::abs), unit, e);
            }
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
                } else if let Some((unit, x, y)) = date_diff(expr)
                    && let (Some(a), Some(b)) = (literal_int(low), literal_int(high))
                {
                    self.push_both(&[x, y], a.abs().max(b.abs()), unit, e);
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
            Expr::BinaryOp {
                left,
                op: BinaryOperator::LtEq | BinaryOperator::Lt,
                right,
            } => {
                // `b.d <= a.d + 7`: up to 7 ahead.
                if let Some((_, n, unit)) = plus_offset(right) {
                    self.push_ahead(left, n, unit, e);
                }
            }
            Expr::BinaryOp {
                left,
                op: BinaryOperator::Eq,
                right,
            } => {
                // A self-join on a shifted date: `b.d = a.d - interval '7 days'`.
                if let Some((_, n, unit)) = minus_offset(right) {
                    self.push_window(left, n, unit, e);
                } else if let Some((_, n, unit)) = minus_offset(left) {
                    self.push_window(right, n, unit, e);
                } else if let Some((_, n, unit)) = plus_offset(right) {
                    self.push_ahead(left, n, unit, e);
                } else if let Some((_, n, unit)) = plus_offset(left) {
                    self.push_ahead(right, n, unit, e);
                } else if let Some((n, unit, ahead)) = shift_inside(right) {
                    // Shifted inside a conversion: `w.key = cast(strftime(
                    // strptime(t.key, ...) - interval 7 day, ...) as int)`.
                    self.push_shift(left, n, unit, ahead, e);
                } else if let Some((n, unit, ahead)) = shift_inside(left) {
                    self.push_shift(right, n, unit, ahead, e);
                }
            }
            Expr::AtTimeZone { time_zone, .. } => {
                if let Some(z) = text_literal(time_zone) {
                    self.zones
                        .push((z, format!("{}: `{}`", line(e), shorten(e))));
                }
            }
            Expr::Function(f)
                if matches!(
                    f.name.to_string().to_ascii_lowercase().as_str(),
                    "timezone" | "convert_timezone" | "from_utc_timestamp" | "to_utc_timestamp"
                ) =>
            {
                // The zone is the last literal: `timezone('X', ts)`,
                // `convert_timezone('from', 'to', ts)`, `from_utc_timestamp(ts, 'X')`.
                if let Some(z) = positional(&f.args).into_iter().rev().find_map(text_literal) {
                    self.zones
                        .push((z, format!("{}: `{}`", line(e), shorten(e))));
                }
            }
            Expr::Function(f) if f.over.is_some() => {
                let (lo, hi, unit) = over_reach(f);
                if (lo, hi) != (0, 0) {
                    let unless_keyed_by = match &f.over {
                        Some(WindowType::WindowSpec(spec)) => {
                            spec.partition_by.iter().filter_map(key_column).collect()
                        }
                        _ => Vec::new(),
                    };
                    self.windows.push(RawWindow {
                        qualifier: None,
                        lo,
                        hi,
                        unit,
                        evidence: format!("{}: `{}`", line(e), shorten(e)),
                        unless_keyed_by,
                    });
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

impl Finder {
    /// Comparisons of two tables' times left open one way (`t.touched_at
    /// <= o.ordered_at` with no lower bound, `o.d >= s.valid_from`, a
    /// correlated `p.login_date < l.login_date`): the rows they pair may be
    /// any time apart that way. A bound the other way (`and t.touched_at >=
    /// o.ordered_at - interval '7 days'`) closes it, and its window is read
    /// where offsets are.
    fn open_comparisons(&mut self, s: &Select) {
        let mut conds: Vec<&Expr> = Vec::new();
        if let Some(w) = &s.selection {
            conds.push(w);
        }
        for t in &s.from {
            for j in &t.joins {
                if let Some(on) = join_on(&j.join_operator) {
                    conds.push(on);
                }
            }
        }
        // (side, other side) → (bounded below, bounded above), keyed by text.
        let mut bounds: BTreeMap<(String, String), (bool, bool, Option<String>)> = BTreeMap::new();
        let mut note = |x: &Expr, y: &Expr, below: bool| {
            let key = (
                strip(x).to_string().to_lowercase(),
                strip(y).to_string().to_lowercase(),
            );
            let e = bounds
                .entry(key)
                .or_insert_with(|| (false, false, qualifier(strip(x))));
            if below {
                e.0 = true;
            } else {
                e.1 = true;
            }
        };
        let mut evidence = None;
        for c in conds.iter().flat_map(|c| conjuncts(c)) {
            let (x, op, y) = match c {
                Expr::BinaryOp { left, op, right } => (left.as_ref(), op, right.as_ref()),
                Expr::Between {
                    expr,
                    negated: false,
                    low,
                    high,
                } => {
                    let (l, h) = (base_of(low), base_of(high));
                    if let (Some(l), Some(h)) = (l, h)
                        && apart(expr, l)
                        && apart(expr, h)
                        && (time_expr(expr) || time_expr(l) || time_expr(h))
                    {
                        note(expr, l, true);
                        note(l, expr, false);
                        note(expr, h, false);
                        note(h, expr, true);
                        evidence.get_or_insert(c);
                    }
                    continue;
                }
                _ => continue,
            };
            let below = match op {
                BinaryOperator::Gt | BinaryOperator::GtEq => true,
                BinaryOperator::Lt | BinaryOperator::LtEq => false,
                _ => continue,
            };
            let (Some(xb), Some(yb)) = (base_of(x), base_of(y)) else {
                continue;
            };
            if !apart(xb, yb) || !(time_expr(xb) || time_expr(yb)) {
                continue;
            }
            note(xb, yb, below);
            note(yb, xb, !below);
            evidence.get_or_insert(c);
        }
        let Some(evidence) = evidence else { return };
        for (below, above, q) in bounds.values() {
            let (lo, hi) = match (below, above) {
                (true, false) => (0, UNBOUNDED),
                (false, true) => (-UNBOUNDED, 0),
                _ => continue,
            };
            self.windows.push(RawWindow {
                qualifier: q.clone(),
                lo,
                hi,
                unit: None,
                evidence: format!(
                    "{}: `{}` (open one way: rows any time apart)",
                    line(evidence),
                    shorten(evidence)
                ),
                unless_keyed_by: Vec::new(),
            });
        }
    }

    /// Grouped by a time of one table (`group by d.fiscal_period_start`
    /// of a calendar joined on `d.calendar_date = s.sale_date`): the rows
    /// of the other tables land in keys their own times do not give, as
    /// far as that table maps them. Joined on the very column grouped by
    /// (`cal.d = f.d`, grouped by `cal.d`), a row keeps its time.
    fn keys_of_another_table(&mut self, s: &Select) {
        use sqlparser::ast::GroupByExpr;
        let GroupByExpr::Expressions(grouped, _) = &s.group_by else {
            return;
        };
        // Not grouped, the times it selects are its keys: a row of a table
        // joined on an id (refunds to their orders, by `order_id`) lands on
        // the day of the table whose time is selected, whatever its own.
        let selected_times: Vec<Expr>;
        let keys: &Vec<Expr> = if grouped.is_empty() {
            selected_times = s
                .projection
                .iter()
                .filter_map(|it| match it {
                    sqlparser::ast::SelectItem::UnnamedExpr(x)
                    | sqlparser::ast::SelectItem::ExprWithAlias { expr: x, .. } => Some(x),
                    _ => None,
                })
                .filter(|x| !aggregates_or_windows(x))
                .filter(|x| base_of(x).is_some_and(time_expr))
                .cloned()
                .collect();
            &selected_times
        } else {
            grouped
        };
        if keys.is_empty() {
            return;
        }
        let selected = |e: &Expr| -> String {
            // `group by 1` and aliases name a selected expression.
            let pick = match strip(e) {
                Expr::Value(v) => match &v.value {
                    Value::Number(n, _) => n.parse::<usize>().ok().and_then(|i| {
                        s.projection.get(i.wrapping_sub(1)).and_then(|it| match it {
                            sqlparser::ast::SelectItem::UnnamedExpr(x)
                            | sqlparser::ast::SelectItem::ExprWithAlias { expr: x, .. } => Some(x),
                            _ => None,
                        })
                    }),
                    _ => None,
                },
                _ => None,
            };
            strip(pick.unwrap_or(e)).to_string().to_lowercase()
        };
        let keys: Vec<&Expr> = keys.iter().collect();
        // Time keys, all of one table's (by qualifier).
        let mut owners = BTreeSet::new();
        let mut key_texts = BTreeSet::new();
        for k in &keys {
            let text = selected(k);
            let expr = s
                .projection
                .iter()
                .find_map(|it| match it {
                    sqlparser::ast::SelectItem::UnnamedExpr(x)
                    | sqlparser::ast::SelectItem::ExprWithAlias { expr: x, .. }
                        if strip(x).to_string().to_lowercase() == text =>
                    {
                        Some(x)
                    }
                    _ => None,
                })
                .unwrap_or(k);
            if let Some(b) = base_of(expr).filter(|b| time_expr(b)) {
                match qualifier(strip(b)) {
                    Some(q) => owners.insert(q),
                    None => return,
                };
                key_texts.insert(strip(b).to_string().to_lowercase());
            }
        }
        if owners.len() != 1 {
            return;
        }
        let Some(owner) = owners.pop_first() else {
            return;
        };
        let mut conds: Vec<&Expr> = s.selection.iter().collect();
        for t in &s.from {
            for j in &t.joins {
                conds.extend(join_on(&j.join_operator));
            }
        }
        // Tables compared with the key's own column keep their times (an
        // equality), or reach as far as the comparison says (read where
        // offsets and open comparisons are).
        let mut kept = BTreeSet::from([owner.clone()]);
        let mut plain = BTreeSet::new();
        let mut compared = Vec::new();
        for c in conds.iter().flat_map(|c| conjuncts(c)) {
            let mut refs = Vec::new();
            column_refs(c, &mut refs);
            if refs.iter().any(|(_, text)| key_texts.contains(text)) {
                let others: Vec<String> = refs
                    .into_iter()
                    .filter_map(|(q, _)| q)
                    .filter(|q| *q != owner)
                    .collect();
                // `w.day = d.day`: the same time, kept as it is.
                let equal = matches!(
                    c,
                    Expr::BinaryOp { left, op: BinaryOperator::Eq, right }
                        if is_column(strip(left)) && is_column(strip(right))
                );
                for q in &others {
                    if equal {
                        plain.insert(q.clone());
                    } else {
                        compared.push((q.clone(), format!("{}: `{}`", line(c), shorten(c))));
                    }
                }
                kept.extend(others);
            }
        }
        // Compared otherwise (`d.day - w.day between 0 and 6`, the same
        // month by `date_trunc`), a table reaches as far as a window the
        // comparison spells; checked once the select's expressions are read.
        if let Some((_, pending)) = self.time_joins.last_mut() {
            pending.extend(compared.into_iter().filter(|(q, _)| !plain.contains(q)));
        }
        // A table read in a subquery of the filter (`not exists (select 1
        // from refunds r where r.order_id = o.order_id)`, `id in (select
        // ...)`) keeps the key's times only if the subquery names the key.
        let mut subquery_tables = Vec::new();
        if let Some(w) = &s.selection {
            let _ = sqlparser::ast::visit_expressions(w, |e| {
                let q = match e {
                    Expr::Exists { subquery, .. } | Expr::Subquery(subquery) => Some(subquery),
                    Expr::In {
                        target: sqlparser::ast::InTarget::Subquery(subquery),
                        ..
                    } => Some(subquery),
                    _ => None,
                };
                if let Some(q) = q {
                    let text = q.to_string().to_lowercase();
                    if !key_texts.iter().any(|k| text.contains(k.as_str())) {
                        let _ = sqlparser::ast::visit_relations(&**q, |name| {
                            if let Some(last) = name.0.last() {
                                subquery_tables.push(
                                    last.to_string()
                                        .replace(['"', '`', '[', ']'], "")
                                        .to_lowercase(),
                                );
                            }
                            ControlFlow::<()>::Continue(())
                        });
                    }
                }
                ControlFlow::<()>::Continue(())
            });
        }
        let mut aliases = subquery_tables;
        for t in &s.from {
            for f in std::iter::once(&t.relation).chain(t.joins.iter().map(|j| &j.relation)) {
                if let TableFactor::Table { name, alias, .. } = f {
                    let a = alias.as_ref().map_or_else(
                        || name.0.last().map(|p| p.to_string()).unwrap_or_default(),
                        |a| a.name.value.clone(),
                    );
                    aliases.push(a.to_lowercase());
                }
            }
        }
        for a in aliases.into_iter().filter(|a| !kept.contains(a)) {
            self.push_all_of_time(Some(a), format!(
                    "{}: grouped by `{owner}`'s time, which this table's rows map to as that table says",
                    s.span().start.line
                ));
        }
    }

    /// A reach over all of time, both ways, on the upstream `qualifier`
    /// names (`None`: every upstream).
    fn push_all_of_time(&mut self, qualifier: Option<String>, evidence: String) {
        self.windows.push(RawWindow {
            qualifier,
            lo: -UNBOUNDED,
            hi: UNBOUNDED,
            unit: None,
            evidence,
            unless_keyed_by: Vec::new(),
        });
    }

    fn push_window(&mut self, column: &Expr, n: i64, unit: Option<Grain>, whole: &Expr) {
        if n < 0 {
            return;
        }
        self.windows.push(RawWindow {
            qualifier: qualifier(strip(column)),
            lo: -n,
            hi: 0,
            unit,
            evidence: format!("{}: `{}`", line(whole), shorten(whole)),
            unless_keyed_by: Vec::new(),
        });
    }

    /// A read up to `n` units either way, on each column's table.
    fn push_both(&mut self, columns: &[&Expr], n: i64, unit: Option<Grain>, whole: &Expr) {
        for c in columns {
            self.windows.push(RawWindow {
                qualifier: qualifier(strip(c)),
                lo: -n,
                hi: n,
                unit,
                evidence: format!("{}: `{}`", line(whole), shorten(whole)),
                unless_keyed_by: Vec::new(),
            });
        }
    }

    fn push_shift(
        &mut self,
        column: &Expr,
        n: i64,
        unit: Option<Grain>,
        ahead: bool,
        whole: &Expr,
    ) {
        if ahead {
            self.push_ahead(column, n, unit, whole);
        } else {
            self.push_window(column, n, unit, whole);
        }
    }

    /// A read `n` units ahead (`b.d = a.d + interval '1 day'`).
    fn push_ahead(&mut self, column: &Expr, n: i64, unit: Option<Grain>, whole: &Expr) {
        if n <= 0 {
            return;
        }
        self.windows.push(RawWindow {
            qualifier: qualifier(strip(column)),
            lo: 0,
            hi: n,
            unit,
            evidence: format!("{}: `{}`", line(whole), shorten(whole)),
            unless_keyed_by: Vec::new(),
        });
    }
}

/// Whether `e` is a time column (by its name, see [`time_like`]), or a
/// cast or truncation of one.
fn time_expr(e: &Expr) -> bool {
    match strip(e) {
        Expr::Identifier(i) => time_like(&i.value),
        Expr::CompoundIdentifier(parts) => parts.last().is_some_and(|i| time_like(&i.value)),
        Expr::Function(f) => positional(&f.args).into_iter().any(time_expr),
        _ => false,
    }
}

/// How far in time one window function reads from its row: `[lo, hi]`
/// in `unit` (`None`: rows, taken as the upstream's partitions).
fn over_reach(f: &sqlparser::ast::Function) -> (i64, i64, Option<Grain>) {
    use sqlparser::ast::WindowFrameBound as B;
    let everything = (-UNBOUNDED, UNBOUNDED, None);
    let Some(WindowType::WindowSpec(spec)) = &f.over else {
        // `over w`: a named window ripple does not follow.
        return everything;
    };
    // The period a `partition by date_trunc('month', d)` keeps it inside.
    let mut period: Option<(i64, Grain)> = None;
    // Partitioned by something else than time (`partition by customer_id`):
    // a row's previous row in its partition may be any time before.
    let mut gappy = false;
    for p in &spec.partition_by {
        if let Some(g) = date_trunc_grain(strip(p)) {
            let days = match g {
                Grain::Hour => 0,
                Grain::Day => 0,
                Grain::Week => 6,
                Grain::Month => 30,
                Grain::Year | Grain::None => 365,
            };
            period = Some((days, Grain::Day));
        } else if let Expr::Identifier(i) = strip(p)
            && time_like(&i.value)
        {
            return (0, 0, None);
        } else if let Expr::CompoundIdentifier(parts) = strip(p)
            && parts.last().is_some_and(|i| time_like(&i.value))
        {
            return (0, 0, None);
        } else {
            gappy = true;
        }
    }
    let name = f.name.to_string().to_ascii_lowercase();
    let args = positional(&f.args);
    // Ordered by something else than time (`rank() over (order by revenue
    // desc)`): a row's neighbours are anywhere in time, both ways.
    let by_time = spec.order_by.first().is_some_and(|o| time_expr(&o.expr));
    let (lo, hi, unit) = if spec.order_by.is_empty() || !by_time {
        // The whole window partition: all of it.
        everything
    } else if let Some(frame) = &spec.window_frame {
        let range = frame.units == WindowFrameUnits::Range;
        let mut unit = None;
        let mut bound = |b: &B| -> i64 {
            let n = match b {
                B::CurrentRow => return 0,
                B::Preceding(None) | B::Following(None) => return UNBOUNDED,
                B::Preceding(Some(e)) | B::Following(Some(e)) => e,
            };
            let (n, u) = match interval(n) {
                Some((n, u)) => (Some(n), u),
                None => (literal_int(n), range.then_some(Grain::Day)),
            };
            if u.is_some() {
                unit = u;
            }
            n.unwrap_or(UNBOUNDED)
        };
        let signed = |b: &B, n: i64| match b {
            B::Preceding(_) => -n,
            _ => n,
        };
        let start = bound(&frame.start_bound);
        let lo = signed(&frame.start_bound, start);
        let hi = match &frame.end_bound {
            None => 0,
            Some(b) => {
                let n = bound(b);
                signed(b, n)
            }
        };
        (lo.min(0), hi.max(0), unit)
    } else {
        let offset = || match args.get(1) {
            None => Some(1),
            Some(e) => literal_int(e),
        };
        match name.as_str() {
            "lag" => (-offset().unwrap_or(UNBOUNDED).abs(), 0, None),
            "lead" => (0, offset().unwrap_or(UNBOUNDED).abs(), None),
            // The default frame: from the window partition's first row to
            // this one (its peers too), and ranks count every row before.
            _ => (-UNBOUNDED, 0, None),
        }
    };
    // Rows counted inside a partition that is not a period of time reach
    // as far as that partition's rows are spread: all the way.
    let (lo, hi) = if gappy && unit.is_none() {
        (
            if lo < 0 { -UNBOUNDED } else { 0 },
            if hi > 0 { UNBOUNDED } else { 0 },
        )
    } else {
        (lo, hi)
    };
    // Ordered latest first, `preceding` rows are later ones; ordered by an
    // operator (`using >`), either.
    use sqlparser::ast::OrderBySort;
    let (lo, hi) = match spec.order_by.first().and_then(|o| o.options.sort.as_ref()) {
        Some(OrderBySort::Desc) => (-hi, -lo),
        Some(OrderBySort::Using(_)) => (lo.min(-hi), hi.max(-lo)),
        _ => (lo, hi),
    };
    match period {
        // Inside its period: days the frame spells, else the period's.
        Some((days, g)) => {
            let day = unit == Some(Grain::Day);
            let lo = if lo == 0 || (day && lo > -days) {
                lo
            } else {
                -days
            };
            let hi = if hi == 0 || (day && hi < days) {
                hi
            } else {
                days
            };
            (lo, hi, Some(g))
        }
        None => (lo, hi, unit),
    }
}

/// A column named as it is (`d`, `w.day`).
fn is_column(e: &Expr) -> bool {
    matches!(e, Expr::Identifier(_) | Expr::CompoundIdentifier(_))
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

/// A shift by a literal anywhere inside `e` (`strftime(d - interval 7
/// day, '%Y%m%d')`): how far, its unit, and whether it goes ahead.
fn shift_inside(e: &Expr) -> Option<(i64, Option<Grain>, bool)> {
    if let Some((_, n, unit)) = minus_offset(e) {
        return Some((n, unit, false));
    }
    if let Some((_, n, unit)) = plus_offset(e) {
        return Some((n, unit, true));
    }
    match e {
        Expr::Cast { expr, .. } | Expr::Nested(expr) => shift_inside(expr),
        Expr::AtTimeZone { timestamp, .. } => shift_inside(timestamp),
        Expr::Function(f) => positional(&f.args).into_iter().find_map(shift_inside),
        Expr::BinaryOp { left, right, .. } => shift_inside(left).or_else(|| shift_inside(right)),
        _ => None,
    }
}

/// The time column a selected expression moves (`d + 1`, `date_trunc('day',
/// ts - interval '5 hours')`, `d - dayofweek(d)`), by a literal or not; a
/// difference of two times (`d - first_d`) is a number, not a move.
fn shifted_time(e: &Expr) -> Option<&Expr> {
    match e {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::Plus | BinaryOperator::Minus,
            right,
        } if time_expr(left) && (!time_expr(right) || part_of_time(right)) => Some(left),
        Expr::BinaryOp {
            left,
            op: BinaryOperator::Plus,
            right,
        } if time_expr(right) && !time_expr(left) => Some(right),
        Expr::BinaryOp { left, right, .. } => shifted_time(left).or_else(|| shifted_time(right)),
        Expr::Cast { expr, .. } | Expr::Nested(expr) => shifted_time(expr),
        Expr::AtTimeZone { timestamp, .. } => shifted_time(timestamp),
        // `date_add(order_date, ship_days * interval 1 day)`: moved by an
        // amount, literal or not.
        Expr::Function(f)
            if f.over.is_none()
                && matches!(
                    f.name.to_string().to_ascii_lowercase().as_str(),
                    "date_add" | "dateadd" | "date_sub" | "datesub" | "timestampadd" | "add_months"
                ) =>
        {
            positional(&f.args).into_iter().find(|a| time_expr(a))
        }
        Expr::Function(f) if f.over.is_none() => {
            positional(&f.args).into_iter().find_map(shifted_time)
        }
        _ => None,
    }
}

/// `d - extract(isodow from d) + 1` (or `d - (isodow(d) - 1)`): the
/// Monday of `d`'s ISO week, as `date_trunc('week', d)` is: a row stays in
/// its week's partition.
fn iso_week_start(e: &Expr) -> bool {
    let isodow = |e: &Expr| match strip(e) {
        Expr::Extract { field, .. } => matches!(field, DateTimeField::Isodow),
        Expr::Function(f) => f.name.to_string().eq_ignore_ascii_case("isodow"),
        _ => false,
    };
    let minus_one = |e: &Expr| {
        matches!(strip(e), Expr::BinaryOp { left, op: BinaryOperator::Minus, right }
            if isodow(left) && literal_int(right) == Some(1))
    };
    match strip(e) {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::Plus,
            right,
        } if literal_int(right) == Some(1) => matches!(strip(left),
            Expr::BinaryOp { left: x, op: BinaryOperator::Minus, right: dow }
                if time_expr(x) && isodow(dow)),
        Expr::BinaryOp {
            left,
            op: BinaryOperator::Minus,
            right,
        } => time_expr(left) && minus_one(right),
        _ => false,
    }
}

/// The `ON` condition of a join, if it has one.
fn join_on(op: &sqlparser::ast::JoinOperator) -> Option<&Expr> {
    use sqlparser::ast::{JoinConstraint, JoinOperator as J};
    let c = match op {
        J::Join(c)
        | J::Inner(c)
        | J::Left(c)
        | J::LeftOuter(c)
        | J::Right(c)
        | J::RightOuter(c)
        | J::FullOuter(c)
        | J::Semi(c)
        | J::LeftSemi(c)
        | J::RightSemi(c)
        | J::Anti(c)
        | J::LeftAnti(c)
        | J::RightAnti(c) => c,
        _ => return None,
    };
    match c {
        JoinConstraint::On(e) => Some(e),
        _ => None,
    }
}

/// Every column a condition names, with its qualifier, as text.
fn column_refs(e: &Expr, out: &mut Vec<(Option<String>, String)>) {
    struct Refs<'a>(&'a mut Vec<(Option<String>, String)>);
    impl Visitor for Refs<'_> {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            if matches!(e, Expr::Identifier(_) | Expr::CompoundIdentifier(_)) {
                self.0.push((qualifier(e), e.to_string().to_lowercase()));
            }
            ControlFlow::Continue(())
        }
    }
    let _ = e.visit(&mut Refs(out));
}

/// The terms of a conjunction (`a and (b and c)` → a, b, c).
fn conjuncts(e: &Expr) -> Vec<&Expr> {
    match e {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => {
            let mut v = conjuncts(left);
            v.extend(conjuncts(right));
            v
        }
        Expr::Nested(inner) => conjuncts(inner),
        other => vec![other],
    }
}

/// The column a side of a comparison reads, through offsets, casts and
/// truncations (`a.d - interval '7 days'` → `a.d`); `None` for anything
/// else (a literal, `current_date`, an expression of several). A
/// comparison counts when one of its sides is named like a time.
fn base_of(e: &Expr) -> Option<&Expr> {
    let e = strip(e);
    if let Some((base, _, _)) = minus_offset(e).or_else(|| plus_offset(e)) {
        return base_of(base);
    }
    match e {
        Expr::Identifier(i) if !now_like(&i.value) => Some(e),
        Expr::CompoundIdentifier(_) => Some(e),
        Expr::AtTimeZone { timestamp, .. } => base_of(timestamp),
        Expr::Function(f) if f.over.is_none() => {
            let args = positional(&f.args);
            let cols: Vec<&Expr> = args.iter().filter_map(|a| base_of(a)).collect();
            match cols.as_slice() {
                [one] => Some(one),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether `e` calls an aggregate function outside any window.
fn aggregates_only(e: &Expr) -> bool {
    struct Agg(bool);
    impl Visitor for Agg {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            if let Expr::Function(f) = e
                && f.over.is_none()
                && matches!(
                    f.name.to_string().to_ascii_lowercase().as_str(),
                    "min"
                        | "max"
                        | "count"
                        | "sum"
                        | "avg"
                        | "any_value"
                        | "arg_min"
                        | "arg_max"
                        | "array_agg"
                        | "string_agg"
                        | "listagg"
                        | "median"
                        | "mode"
                )
            {
                self.0 = true;
            }
            ControlFlow::Continue(())
        }
    }
    let mut a = Agg(false);
    let _ = e.visit(&mut a);
    a.0
}

/// Whether `e` calls an aggregate or a window function anywhere: what it
/// selects is then no row's own time.
fn aggregates_or_windows(e: &Expr) -> bool {
    struct Agg(bool);
    impl Visitor for Agg {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            if let Expr::Function(f) = e {
                let n = f.name.to_string().to_ascii_lowercase();
                if f.over.is_some()
                    || matches!(
                        n.as_str(),
                        "min"
                            | "max"
                            | "count"
                            | "sum"
                            | "avg"
                            | "any_value"
                            | "first"
                            | "last"
                            | "arg_min"
                            | "arg_max"
                            | "array_agg"
                            | "string_agg"
                            | "listagg"
                            | "median"
                            | "mode"
                    )
                {
                    self.0 = true;
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut a = Agg(false);
    let _ = e.visit(&mut a);
    a.0
}

/// The name an identifier expression holds.
fn last_ident(e: &Expr) -> String {
    match e {
        Expr::Identifier(i) => i.value.clone(),
        Expr::CompoundIdentifier(parts) => {
            parts.last().map(|p| p.value.clone()).unwrap_or_default()
        }
        _ => String::new(),
    }
}

/// Two columns of two tables: at least one qualified, by different names.
fn apart(a: &Expr, b: &Expr) -> bool {
    match (qualifier(strip(a)), qualifier(strip(b))) {
        (Some(x), Some(y)) => x != y,
        (None, None) => false,
        _ => !same(a, b),
    }
}

/// A `date_trunc` to a unit ripple has no grain for (`quarter`, `decade`,
/// `isoyear`), under casts and parentheses.
fn odd_trunc(e: &Expr) -> bool {
    match strip(e) {
        Expr::Function(f) if f.name.to_string().eq_ignore_ascii_case("date_trunc") => {
            let args = positional(&f.args);
            let word = args.iter().find_map(|a| match strip(a) {
                Expr::Value(v) => match &v.value {
                    Value::SingleQuotedString(w) => Some(w.clone()),
                    _ => None,
                },
                Expr::Identifier(i) if i.quote_style.is_none() && args.len() == 2 => {
                    Some(i.value.clone()).filter(|_| std::ptr::eq(*a, args[1]))
                }
                _ => None,
            });
            word.is_some_and(|w| unit_word(&w).is_none())
        }
        _ => false,
    }
}

/// What a grouped select groups by, each resolved to the selected
/// expression it names (`group by 1`, an alias); `group by all`: every
/// selected expression.
fn grouped_exprs(s: &Select) -> Vec<&Expr> {
    use sqlparser::ast::{GroupByExpr, SelectItem};
    let selected: Vec<&Expr> = s
        .projection
        .iter()
        .filter_map(|i| match i {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => Some(e),
            _ => None,
        })
        .collect();
    let alias_of = |name: &str| {
        s.projection.iter().find_map(|i| match i {
            SelectItem::ExprWithAlias { expr, alias } if alias.value.eq_ignore_ascii_case(name) => {
                Some(expr)
            }
            _ => None,
        })
    };
    match &s.group_by {
        GroupByExpr::All(_) => selected,
        GroupByExpr::Expressions(es, _) => es
            .iter()
            .map(|e| match strip(e) {
                Expr::Value(v) => match &v.value {
                    Value::Number(n, _) => n
                        .parse::<usize>()
                        .ok()
                        .and_then(|i| selected.get(i.wrapping_sub(1)).copied())
                        .unwrap_or(e),
                    _ => e,
                },
                Expr::Identifier(i) => alias_of(&i.value).unwrap_or(e),
                _ => e,
            })
            .collect(),
    }
}

/// Whether a grouped select groups by some time (a time-like column, a
/// truncation or cast of one), reading each group from its own partitions.
/// `group by 1` and `group by all` look at the selected expressions.
fn grouped_by_time(s: &Select) -> bool {
    grouped_exprs(s)
        .into_iter()
        .any(|e| time_expr(e) || date_trunc_grain(strip(e)).is_some() || cast_to_date(e).is_some())
}

/// The columns a grouped select groups by, as plain columns (through
/// casts, `group by 1` and aliases; `group by all`: the selected columns
/// that are not aggregates), by the name the upstream gives them.
fn group_columns(s: &Select) -> Vec<String> {
    grouped_exprs(s)
        .into_iter()
        .filter_map(key_column)
        .collect()
}

/// The column `e` is, through casts and parentheses: what a group or a
/// window partition keyed by it keeps one value of.
fn key_column(e: &Expr) -> Option<String> {
    match strip(e) {
        Expr::Identifier(i) => Some(i.value.clone()),
        Expr::CompoundIdentifier(parts) => parts.last().map(|i| i.value.clone()),
        _ => None,
    }
}

/// The group by clause, short, for evidence.
fn shorten_group(s: &Select) -> String {
    let g = s.group_by.to_string();
    if g.chars().count() > 60 {
        format!("{}…", g.chars().take(60).collect::<String>())
    } else {
        g
    }
}

/// A number read off a time (`dayofweek(d)`, `extract(dow from d)`), not
/// a time itself.
fn part_of_time(e: &Expr) -> bool {
    match strip(e) {
        Expr::Extract { .. } => true,
        Expr::Function(f) => matches!(
            f.name.to_string().to_ascii_lowercase().as_str(),
            "dayofweek"
                | "dow"
                | "isodow"
                | "weekday"
                | "day_of_week"
                | "dayofmonth"
                | "dayofyear"
                | "day"
                | "date_part"
                | "datepart"
                | "extract"
                | "hour"
                | "minute"
                | "month"
                | "year"
                | "week"
                | "weekofyear"
                | "isoweek"
        ),
        _ => false,
    }
}

/// The coarsest `date_trunc` inside `e`.
fn trunc_inside(e: &Expr) -> Option<Grain> {
    let here = date_trunc_grain(e);
    let below = match e {
        Expr::Cast { expr, .. } | Expr::Nested(expr) => trunc_inside(expr),
        Expr::AtTimeZone { timestamp, .. } => trunc_inside(timestamp),
        Expr::Function(f) => positional(&f.args)
            .into_iter()
            .filter_map(trunc_inside)
            .max(),
        Expr::BinaryOp { left, right, .. } => trunc_inside(left).max(trunc_inside(right)),
        _ => None,
    };
    here.max(below)
}

/// `date_diff('day', x, y)`, `datediff(day, x, y)` → (unit, x, y).
fn date_diff(e: &Expr) -> Option<(Option<Grain>, &Expr, &Expr)> {
    let Expr::Function(f) = strip(e) else {
        return None;
    };
    let name = f.name.to_string().to_ascii_lowercase();
    if !matches!(
        name.as_str(),
        "date_diff" | "datediff" | "datesub" | "date_sub"
    ) || name.ends_with("sub")
    {
        return None;
    }
    match positional(&f.args).as_slice() {
        [unit, x, y] => Some((unit_of(unit).or(Some(Grain::Day)), x, y)),
        [x, y] => Some((Some(Grain::Day), x, y)),
        _ => None,
    }
}

/// `x + INTERVAL 'n unit'`, `dateadd(unit, n, x)`, `date_add(x, n)`,
/// `x + n` (n > 0) → (x, n, unit).
fn plus_offset(e: &Expr) -> Option<(&Expr, i64, Option<Grain>)> {
    match strip(e) {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::Plus,
            right,
        } => {
            if let Some((n, unit)) = interval(right) {
                return (n > 0).then_some((left.as_ref(), n, unit));
            }
            literal_int(right)
                .filter(|n| *n > 0)
                .map(|n| (left.as_ref(), n, Some(Grain::Day)))
        }
        Expr::BinaryOp {
            left,
            op: BinaryOperator::Minus,
            right,
        } => {
            let (n, unit) = interval(right)?;
            (n < 0).then_some((left.as_ref(), -n, unit))
        }
        Expr::Function(f) => {
            let name = f.name.to_string().to_lowercase();
            let args = positional(&f.args);
            match (name.as_str(), args.as_slice()) {
                ("dateadd" | "date_add" | "timestampadd", [unit, n, base]) => {
                    let n = literal_int(n)?;
                    (n > 0).then_some((*base, n, unit_of(unit)))
                }
                ("date_add" | "dateadd", [base, n]) => {
                    let (n, unit) =
                        interval(n).or_else(|| literal_int(n).map(|n| (n, Some(Grain::Day))))?;
                    (n > 0).then_some((*base, n, unit))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// `INTERVAL '6 day'`, `INTERVAL '6' DAY`, `INTERVAL 6 DAY` → (6, day).
fn interval(e: &Expr) -> Option<(i64, Option<Grain>)> {
    let Expr::Interval(iv) = strip(e) else {
        return None;
    };
    if let Some(field) = &iv.leading_field {
        let n = literal_int(&iv.value)?;
        return Some(in_hours(n, &field.to_string()).unwrap_or((n, field_grain(field))));
    }
    let Expr::Value(v) = iv.value.as_ref() else {
        return None;
    };
    let Value::SingleQuotedString(s) = &v.value else {
        return None;
    };
    let mut words = s.split_whitespace();
    let n: i64 = words.next()?.parse().ok()?;
    let word = words.next().unwrap_or_default();
    Some(in_hours(n, word).unwrap_or((n, unit_word(word))))
}

/// Minutes and seconds as whole hours, rounded away from zero: an offset
/// of `330 minutes` moves a row up to 6 hours.
fn in_hours(n: i64, word: &str) -> Option<(i64, Option<Grain>)> {
    let w = word.to_ascii_lowercase();
    let per_hour = if w.starts_with("minute") {
        60
    } else if w.starts_with("second") {
        3600
    } else {
        return None;
    };
    Some((
        n.signum() * ((n.abs() + per_hour - 1) / per_hour),
        Some(Grain::Hour),
    ))
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
        // A constant spelled as arithmetic: `6 * 86400`, `3 * 2`.
        Expr::BinaryOp { left, op, right } => {
            let (a, b) = (literal_int(left)?, literal_int(right)?);
            match op {
                BinaryOperator::Multiply => a.checked_mul(b),
                BinaryOperator::Plus => a.checked_add(b),
                BinaryOperator::Minus => a.checked_sub(b),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `cast(ts as date)`, `ts::date`, `date(ts)` → day.
fn cast_to_date(e: &Expr) -> Option<Grain> {
    match e {
        Expr::Cast { data_type, .. } if data_type.to_string().eq_ignore_ascii_case("date") => {
            Some(Grain::Day)
        }
        Expr::Nested(inner) => cast_to_date(inner),
        Expr::Function(f)
            if f.name.to_string().eq_ignore_ascii_case("date")
                && positional(&f.args).len() == 1 =>
        {
            Some(Grain::Day)
        }
        _ => None,
    }
}

/// DDL that reads no times (`create table if not exists t (...)`, an
/// index, a schema): a zone set after it is in force for all the job's
/// work, as if set first.
fn defines_only(st: &sqlparser::ast::Statement) -> bool {
    use sqlparser::ast::Statement;
    match st {
        Statement::CreateTable(ct) => ct.query.is_none() && ct.like.is_none() && ct.clone.is_none(),
        Statement::CreateSchema { .. } | Statement::CreateIndex(_) => true,
        _ => false,
    }
}

/// Whether `e` cuts a time into days or parts in the session's zone: a
/// cast to a date, a one-argument `date()`, a two-argument `date_trunc`,
/// `extract`/`date_part`, `to_char`/`strftime`/`time_bucket`, of a time not
/// converted to a named zone first (`ts at time zone 'X'`, `timezone('X',
/// ts)`); `date_trunc('day', ts, 'X')` names its zone.
fn cuts_in_session_zone(e: &Expr) -> bool {
    let zoned = |x: &Expr| match strip(x) {
        Expr::AtTimeZone { .. } => true,
        Expr::Function(f) => matches!(
            f.name.to_string().to_ascii_lowercase().as_str(),
            "timezone" | "convert_timezone" | "from_utc_timestamp" | "to_utc_timestamp"
        ),
        _ => false,
    };
    match e {
        Expr::Cast {
            data_type, expr, ..
        } if data_type.to_string().eq_ignore_ascii_case("date") => !zoned(expr),
        Expr::Extract { expr, .. } => !zoned(expr),
        Expr::Function(f) => {
            let args = positional(&f.args);
            match f.name.to_string().to_ascii_lowercase().as_str() {
                "date" => args.len() == 1 && !zoned(args[0]),
                "date_trunc" | "datetrunc" => args.len() == 2 && !zoned(args[1]),
                "date_part" | "datepart" => args.get(1).is_some_and(|x| !zoned(x)),
                "to_char" | "strftime" => args.first().is_some_and(|x| !zoned(x)),
                "time_bucket" => args.len() == 2,
                _ => false,
            }
        }
        _ => false,
    }
}

/// A literal text (a zone, a pattern): `'America/New_York'`.
fn text_literal(e: &Expr) -> Option<String> {
    match strip(e) {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) if !s.is_empty() => Some(s.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// `strftime(d, '%Y-%m')`, `to_char(d, 'YYYY-MM')` → month; the day's
/// patterns (`'%Y%m%d'`, `'YYYY-MM-DD'`) → day.
fn format_grain(e: &Expr) -> Option<Grain> {
    let Expr::Function(f) = e else { return None };
    let name = f.name.to_string().to_ascii_lowercase();
    if !matches!(
        name.as_str(),
        "strftime" | "to_char" | "format_date" | "format_timestamp" | "date_format"
    ) {
        return None;
    }
    let pattern = positional(&f.args)
        .into_iter()
        .rev()
        .find_map(text_literal)?;
    match super::key_expr::text_format(&pattern)? {
        crate::time::KeyFormat::TextYyyyMm => Some(Grain::Month),
        _ => Some(Grain::Day),
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
        for sql in ["select a, b from t where c = 1", "select a * b from t"] {
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

#[cfg(test)]
mod reach_tests {
    use super::*;
    use crate::sql::SqlDialect;

    fn reach(sql: &str) -> Vec<(Option<String>, i64, i64)> {
        parse_and_find(sql, SqlDialect::DuckDb)
            .unwrap()
            .windows
            .iter()
            .map(|w| (w.qualifier.clone(), w.lo, w.hi))
            .collect()
    }

    #[test]
    fn a_table_joined_on_an_id_beside_the_one_whose_time_is_kept_reaches_all_of_time() {
        let all = |q: &str| (Some(q.to_string()), -UNBOUNDED, UNBOUNDED);
        // Refunds joined to their orders by id land on the order's day,
        // whatever day they were refunded (this was read as the same day).
        let sql = "select o.order_id, o.order_date, coalesce(r.amount, 0) as refunded from stg_orders o left join stg_refunds r on r.order_id = o.order_id";
        assert!(could_hold_evidence(sql));
        assert_eq!(reach(sql), [all("r")]);
        // So in a subquery of the filter that does not name the day.
        assert_eq!(
            reach(
                "select o.order_id, o.order_date from stg_orders o where not exists (select 1 from stg_refunds r where r.order_id = o.order_id)"
            ),
            [all("stg_refunds")]
        );
        // Joined on the day too: it keeps the day.
        assert_eq!(
            reach(
                "select o.order_date, o.order_id from stg_orders o join payments p on p.order_id = o.order_id and p.order_date = o.order_date"
            ),
            []
        );
        // One row per key that is not time: a row of any day can replace it.
        let sql = "select distinct on (customer_id) customer_id, order_id, order_date from stg_orders order by customer_id, order_date";
        assert!(could_hold_evidence(sql));
        assert_eq!(reach(sql), [(None, -UNBOUNDED, UNBOUNDED)]);
        assert_eq!(
            reach(
                "select distinct on (order_date) order_date, order_id from stg_orders order by order_date, order_id"
            ),
            []
        );
    }

    #[test]
    fn a_cut_naming_its_zone_is_no_session_s() {
        let cut = |sql: &str| {
            parse_and_find(sql, SqlDialect::Postgres)
                .unwrap()
                .session_cut
        };
        assert!(cut("select cast(ts as date), count(*) from e group by 1"));
        assert!(cut(
            "select date_trunc('day', ts), count(*) from e group by 1"
        ));
        assert!(cut("select extract(hour from ts) from e"));
        assert!(!cut(
            "select date_trunc('day', ts, 'Asia/Kolkata'), count(*) from e group by 1"
        ));
        assert!(!cut(
            "select cast(ts at time zone 'UTC' as date), count(*) from e group by 1"
        ));
    }

    #[test]
    fn a_self_join_compared_in_a_way_no_window_is_read_from_reaches_all_of_time() {
        let all = |q: &str| (Some(q.to_string()), -UNBOUNDED, UNBOUNDED);
        for on in [
            "d.day - w.day between 0 and 6",
            "date_trunc('month', w.day) = date_trunc('month', d.day)",
            "w.day <= d.day and w.day >= date_trunc('month', d.day)",
            "w.day = any(array[d.day, d.day - 1])",
        ] {
            let sql = format!(
                "select d.day, sum(w.amt) from raw.daily d join raw.daily w on {on} group by d.day"
            );
            assert!(reach(&sql).contains(&all("w")), "{on}: {:?}", reach(&sql));
        }
        // The same day, or a window the comparison spells: as before.
        assert_eq!(
            reach(
                "select d.day, sum(w.amt) from raw.daily d join raw.daily w on w.day = d.day group by d.day"
            ),
            []
        );
        assert_eq!(
            reach("select a.d from s a left join s b on b.d > a.d and b.d <= a.d + 7 group by a.d"),
            [(Some("b".to_string()), 0, 7)]
        );
    }

    #[test]
    fn joins_ahead_and_date_diffs_reach_as_far_as_they_say() {
        let sql = "select a.d from s a left join s b on b.d > a.d and b.d <= a.d + 7";
        assert!(could_hold_evidence(sql));
        assert_eq!(reach(sql), [(Some("b".to_string()), 0, 7)]);
        assert_eq!(
            reach("select a.d from s a join s b on date_diff('day', b.d, a.d) between 0 and 27"),
            [
                (Some("b".to_string()), -27, 27),
                (Some("a".to_string()), -27, 27)
            ]
        );
        assert_eq!(
            reach("select a.d from s a join s b on datediff('day', b.d, a.d) = 30"),
            [
                (Some("b".to_string()), -30, 30),
                (Some("a".to_string()), -30, 30)
            ]
        );
    }

    #[test]
    fn window_functions_reach_what_their_frames_say() {
        let one = |sql: &str| {
            reach(sql)
                .into_iter()
                .map(|(_, lo, hi)| (lo, hi))
                .collect::<Vec<_>>()
        };
        assert_eq!(one("select lag(v, 7) over (order by d) from s"), [(-7, 0)]);
        assert_eq!(one("select lead(v) over (order by d) from s"), [(0, 1)]);
        assert_eq!(
            one("select sum(v) over (order by d rows between 6 preceding and 2 following) from s"),
            [(-6, 2)]
        );
        assert_eq!(
            one("select sum(v) over (order by d) from s"),
            [(-UNBOUNDED, 0)]
        );
        assert_eq!(
            one("select sum(v) over (partition by date_trunc('month', d) order by d) from s"),
            [(-30, 0)]
        );
        // Inside a day, nothing crosses a partition; ordered by a value, all of time.
        assert_eq!(
            one("select row_number() over (partition by d order by v desc) from s"),
            []
        );
        assert_eq!(
            one("select rank() over (order by v desc) from s"),
            [(-UNBOUNDED, UNBOUNDED)]
        );
        assert_eq!(
            one("select lag(v) over (order by month_start) from s"),
            [(-1, 0)]
        );
    }

    fn one(sql: &str) -> Vec<(i64, i64)> {
        reach(sql).into_iter().map(|(_, lo, hi)| (lo, hi)).collect()
    }

    #[test]
    fn rows_of_a_partition_that_is_not_time_reach_all_of_it_and_desc_flips() {
        // The previous order of a customer may be any time before.
        assert_eq!(
            one("select lag(d) over (partition by customer_id order by d) from s"),
            [(-UNBOUNDED, 0)]
        );
        // Latest first: a row's `preceding` rows are later ones.
        assert_eq!(
            one("select lag(v, 3) over (order by d desc) from s"),
            [(0, 3)]
        );
        assert_eq!(
            one("select row_number() over (partition by id order by updated_at desc) from s"),
            [(0, UNBOUNDED)]
        );
    }

    #[test]
    fn shifts_inside_conversions_and_constants_as_arithmetic_count() {
        assert_eq!(
            reach(
                "select 1 from t join w on w.dk = cast(strftime(strptime(cast(t.dk as varchar), '%Y%m%d') - interval 7 day, '%Y%m%d') as integer)"
            ),
            [(Some("w".to_string()), -7, 0)]
        );
        assert_eq!(
            one("select 1 from s a join s b on b.d between a.d - 3 * 2 and a.d"),
            [(-6, 0)]
        );
        // Minutes are whole hours, rounded up.
        let w = parse_and_find(
            "select cast(ts + interval 330 minute as date) as d from s",
            SqlDialect::DuckDb,
        )
        .unwrap();
        assert_eq!(
            w.windows
                .iter()
                .map(|w| (w.lo, w.hi, w.unit))
                .collect::<Vec<_>>(),
            [(-6, 6, Some(Grain::Hour))]
        );
    }

    #[test]
    fn a_selected_time_moved_reads_both_ways_unless_it_is_the_iso_monday() {
        assert_eq!(one("select d + 1 as d, v from s"), [(-1, 1)]);
        // Truncated after the move: a period more (a Sunday week: 25 + 7 x 25 hours).
        assert_eq!(
            one("select cast(date_trunc('week', d + 1) - interval 1 day as date) as w from s"),
            [(-200, 200)]
        );
        // Moved by a part of itself: as far as time goes.
        assert_eq!(
            one("select d - dayofweek(d) as w from s"),
            [(-UNBOUNDED, UNBOUNDED)]
        );
        assert_eq!(
            one("select d - extract(isodow from d)::int + 1 as w from s"),
            []
        );
        // A difference of two times is a number, not a move.
        assert_eq!(one("select d - first_order_date as age from s"), []);
    }

    #[test]
    fn zones_and_formatted_grains_are_read_off_the_sql() {
        let f = parse_and_find(
            "select cast(ts at time zone 'America/New_York' as date) as d, strftime(d, '%Y-%m') as m from s group by all",
            SqlDialect::DuckDb,
        )
        .unwrap();
        assert_eq!(
            f.zones.iter().map(|(z, _)| z.as_str()).collect::<Vec<_>>(),
            ["America/New_York"]
        );
        assert!(f.grains.iter().any(|(g, _)| *g == Grain::Month));
    }

    #[test]
    fn comparisons_open_one_way_and_groups_without_time_reach_all_of_it() {
        // A latest row per key, with no time compared: any day (round 29).
        assert!(
            one("select c.id, l.d from c, lateral (select o.d from o where o.cid = c.id order by o.ts desc limit 1) l")
                .contains(&(-UNBOUNDED, UNBOUNDED))
        );
        // A lateral last touch: any touch before the order.
        assert!(
            one("select o.d, t.channel from o left join lateral (select channel from t where t.user_id = o.user_id and t.touched_at <= o.ordered_at order by t.touched_at desc limit 1) t on true")
                .contains(&(-UNBOUNDED, 0))
        );
        // Bounded both ways: only the offsets' windows.
        assert_eq!(
            one("select a.d from s a left join s b on b.d > a.d and b.d <= a.d + 7"),
            [(0, 7)]
        );
        // The clock is not a column.
        assert_eq!(
            one("select d from s where d >= current_date - 7 group by d"),
            [(-7, 0)]
        );
        // Grouped by a user: each group reads all of time.
        assert_eq!(
            one("select user_id, min(activity_date) as first_seen from a group by user_id"),
            [(-UNBOUNDED, UNBOUNDED)]
        );
        assert_eq!(one("select d, count(*) from a group by 1"), []);
    }

    #[test]
    fn a_session_zone_and_a_quarter_are_read() {
        let f = parse_and_find(
            "set time zone 'America/New_York'; select cast(date_trunc('quarter', d) as date) as q, sum(v) from s group by 1",
            SqlDialect::Postgres,
        )
        .unwrap();
        assert_eq!(
            f.session_zones.first().map(|(z, _)| z.as_str()),
            Some("America/New_York")
        );
        assert!(!f.zone_unclear());
        assert!(f.grains.iter().any(|(g, _)| *g == Grain::None));
        // The evidence names the line the `set` is on (it once said 0).
        let f = parse_and_find(
            "-- zone\n\nset time zone 'UTC';\nselect cast(d as date), sum(v) from s group by 1",
            SqlDialect::Postgres,
        )
        .unwrap();
        let (_, ev) = f.session_zones.first().unwrap();
        assert!(ev.starts_with("3: "), "{ev}");
        // Set after the work, locally, or reset: the job's SQL cannot say
        // which zone its casts cut in.
        for sql in [
            "select cast(d as date), sum(v) from s group by 1; set time zone 'UTC'",
            "set time zone 'UTC'; reset timezone; select cast(d as date), sum(v) from s group by 1",
            "begin; set local time zone 'UTC'; commit; select cast(d as date), sum(v) from s group by 1",
        ] {
            let f = parse_and_find(sql, SqlDialect::Postgres).unwrap();
            assert!(f.zone_unclear(), "{sql}");
            // Every cut ran in the session's starting zone: checkable.
            assert_eq!(f.zone_moved(), None, "{sql}");
        }
        // Set after table definitions only: as if first.
        let f = parse_and_find(
            "create table if not exists t (d date);\nset time zone 'America/Los_Angeles';\ninsert into t select cast(ts as date) from s",
            SqlDialect::Postgres,
        )
        .unwrap();
        assert!(!f.zone_unclear());
        assert_eq!(f.zone_moved(), None);
        // Work runs in a zone set after other work, locally, or partly in
        // the first zone and partly after a reset: no check before the run
        // sees it.
        for (sql, moved) in [
            (
                "delete from t;\nset time zone 'America/Los_Angeles';\ninsert into t select cast(ts as date) from s",
                "line 2: `SET TIME ZONE 'America/Los_Angeles'`",
            ),
            (
                "begin;\nset local time zone 'UTC';\ninsert into t select cast(ts as date) from s;\ncommit",
                "line 2: ",
            ),
            (
                "set time zone 'UTC';\ninsert into t select cast(ts as date) from s;\nreset timezone;\ninsert into t select cast(ts as date) from s",
                "line 3: ",
            ),
        ] {
            let f = parse_and_find(sql, SqlDialect::Postgres).unwrap();
            let said = f.zone_moved().unwrap_or_default();
            assert!(said.starts_with(moved), "{sql}: {said}");
        }
    }

    #[test]
    fn an_as_of_join_on_validity_ranges_reads_all_of_the_dimension() {
        let r = reach(
            "select o.order_date, d.segment, count(*) from raw.orders o join mart.dim d on d.customer_id = o.customer_id and o.order_date >= d.valid_from and o.order_date < d.valid_to group by o.order_date, d.segment",
        );
        assert!(r.contains(&(Some("d".to_string()), -UNBOUNDED, 0)), "{r:?}");
        assert!(r.contains(&(Some("d".to_string()), 0, UNBOUNDED)), "{r:?}");
    }

    #[test]
    fn grouped_by_a_calendar_s_period_the_facts_reach_as_the_calendar_maps() {
        let r = reach(
            "select d.fiscal_period_start, sum(s.amount) from raw.sales s join ref.dim_date d on d.calendar_date = s.sale_date group by d.fiscal_period_start",
        );
        assert!(
            r.contains(&(Some("s".to_string()), -UNBOUNDED, UNBOUNDED)),
            "{r:?}"
        );
        // Joined on the column grouped by, or compared with it: as written.
        assert_eq!(
            reach("select c.d, sum(f.v) from cal c left join f on f.d = c.d group by c.d"),
            []
        );
        assert_eq!(
            reach(
                "select a.d, sum(b.v) from u a join u b on b.d between a.d - interval '3 days' and a.d group by a.d"
            ),
            [(Some("b".to_string()), -3, 0)]
        );
    }

    #[test]
    fn recursion_moves_by_a_column_and_whole_input_aggregates_reach_all_of_time() {
        let all = (-UNBOUNDED, UNBOUNDED);
        assert!(
            one("with recursive bal(d, total) as (select min(d), 0 from daily union all select bal.d + 1, bal.total from bal where bal.d < date '2026-03-01') select d, total from bal")
                .contains(&all)
        );
        assert!(
            one("select cast(date_add(order_date, ship_days * interval 1 day) as date) as ship_date, count(*) from raw.orders group by 1")
                .contains(&all)
        );
        assert!(
            reach("select d, count(*) from raw.clicks where d >= (select max(d) - 7 from raw.events) group by d")
                .contains(&(Some("raw.events".to_string()), -UNBOUNDED, UNBOUNDED))
        );
    }
}
