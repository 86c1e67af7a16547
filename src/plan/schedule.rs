//! Scheduling the tasks of a plan (`--start`): each task gets a start and an
//! end that respect its dependencies, the allowed windows, the production
//! blackouts, the global concurrency cap and per-dataset caps.
//!
//! List scheduling in plan order (which is topological): a task starts at
//! the earliest instant, at or after its dependencies end, where the whole
//! run fits inside one allowed window, overlaps no blackout, and keeps every
//! cap. Deterministic: no clocks, no randomness, no hashing order.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::schedule::{Minute, display_minute};

/// Minutes per partition when `ripple.yml` gives no `cost`.
pub const DEFAULT_COST_MINUTES: i64 = 5;
/// A full rebuild costs as many partitions as this.
pub const FULL_REBUILD_PARTITIONS: i64 = 12;
/// Tasks running at once when `backfill.max_concurrency` is not set.
pub const DEFAULT_MAX_CONCURRENCY: u32 = 4;
/// How far past `--start` the scheduler looks before giving up.
const HORIZON_MINUTES: i64 = 400 * 24 * 60;

/// What the scheduler needs to know of one task.
#[derive(Debug, Clone)]
pub struct Job {
    /// Task id.
    pub id: String,
    /// Its dataset (for per-dataset caps).
    pub dataset: String,
    /// How long it runs, minutes.
    pub minutes: i64,
    /// Indices (into the job list) of the tasks it waits for.
    pub after: Vec<usize>,
    /// At most this many tasks of its dataset at once.
    pub dataset_cap: Option<u32>,
}

/// The constraints.
#[derive(Debug, Clone)]
pub struct Constraints {
    /// When the backfill may begin.
    pub start: Minute,
    /// Tasks at once, at most.
    pub max_concurrency: u32,
    /// Allowed daily windows as (from, to) minutes of the day, UTC; a
    /// window may cross midnight. Empty: always allowed.
    pub windows: Vec<(i64, i64)>,
    /// Production runs to stay out of, `[start, end)` minutes.
    pub blackouts: Vec<(Minute, Minute)>,
    /// Everything must end by then, if given.
    pub deadline: Option<Minute>,
}

/// The schedule summary written into the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ScheduleSummary {
    /// When the first task may start.
    pub start: String,
    /// When the last task ends.
    pub end: String,
    /// Minutes from start to end.
    pub makespan_minutes: i64,
    /// Allowed-window occurrences (nights) the plan uses.
    pub windows_used: usize,
    /// The concurrency cap used.
    pub max_concurrency: u32,
    /// Production runs avoided.
    pub blackouts: usize,
    /// For pictures: the allowed windows as minutes of the day, `[from, to)`
    /// (empty: any time).
    #[serde(skip)]
    #[schemars(skip)]
    pub windows: Vec<(i64, i64)>,
    /// For pictures: production runs met between start and end, merged.
    #[serde(skip)]
    #[schemars(skip)]
    pub blackout_spans: Vec<(Minute, Minute)>,
    /// For pictures: each task's `[start, end)`, in the plan's task order.
    #[serde(skip)]
    #[schemars(skip)]
    pub placed: Vec<(Minute, Minute)>,
}

/// Why no schedule could be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// A task longer than any allowed window.
    #[error(
        "task `{task}` runs {minutes} min but the longest allowed window is {window} min; widen `backfill.windows` or make batches smaller"
    )]
    TooLong {
        /// Task id.
        task: String,
        /// Its duration.
        minutes: i64,
        /// The longest window.
        window: i64,
    },
    /// Past the deadline.
    #[error("the plan needs {windows} window{} at max_concurrency {concurrency} and ends {end}, after the deadline {deadline}; raise max_concurrency, widen the windows or move the deadline", if *windows == 1 { "" } else { "s" })]
    Deadline {
        /// Windows used.
        windows: usize,
        /// The cap.
        concurrency: u32,
        /// When it would end.
        end: String,
        /// The deadline.
        deadline: String,
    },
    /// A window in `backfill.windows` that is not `HH:MM-HH:MM`.
    #[error(
        "backfill.windows: `{0}` is not a window; write it as HH:MM-HH:MM (UTC), e.g. 20:00-06:00"
    )]
    BadWindow(String),
    /// Nothing fits within a year and a month.
    #[error(
        "task `{0}` ({1} min) finds no free slot within 400 days of --start: the gaps between allowed windows and production runs are shorter; make batches smaller or lower its `cost`"
    )]
    NoSlot(String, i64),
    /// A DAG file that failed to read: the runs of what it defines are
    /// unknown.
    #[error(
        "a DAG file failed to read ({0}); the runs of the DAGs it defines are unknown, so no schedule can avoid them (`--allow-partial` does not lift this): fix the file (`ripple check` lists what failed), or plan without --start"
    )]
    UnreadableDagFile(String),
    /// A production DAG whose runs cannot be computed.
    #[error(
        "production DAG `{dag}`: {why}; its runs are unknown, so no schedule can avoid them. Give it a cron in ripple.yml (backfill.production: [{{dag: {dag}, cron: '0 2 * * *'}}]) or plan without --start"
    )]
    UnknownProduction {
        /// The DAG.
        dag: String,
        /// Why its schedule cannot be read.
        why: String,
    },
}

/// Start and end (minutes) of every job, in job order, and the summary.
pub fn schedule(
    jobs: &[Job],
    c: &Constraints,
) -> Result<(Vec<(Minute, Minute)>, ScheduleSummary), ScheduleError> {
    let longest_window = if c.windows.is_empty() {
        i64::MAX
    } else {
        c.windows
            .iter()
            .map(|&(a, b)| window_length(a, b))
            .max()
            .unwrap_or(0)
    };
    let mut blackouts = c.blackouts.clone();
    blackouts.sort_unstable();
    let busy_production = merged(&blackouts);
    let mut running = Usage::new(c.max_concurrency);
    let mut per_dataset: std::collections::HashMap<&str, Usage> = std::collections::HashMap::new();
    // Starts known not to work, by duration (`global`: for the window,
    // production and global-cap tests) and by capped dataset and duration
    // (`own`: for all four). Every test only gets stricter as tasks are
    // placed, so a start that failed once fails for good: the next task
    // jumps over what earlier ones scanned instead of scanning it again
    // (rescanning made 43,824 one-minute tasks between runs every two
    // minutes take 82 s).
    let mut global: std::collections::HashMap<i64, Spans> = std::collections::HashMap::new();
    let mut own_known: std::collections::HashMap<(&str, i64), Spans> =
        std::collections::HashMap::new();
    let mut placed: Vec<(Minute, Minute)> = Vec::with_capacity(jobs.len());
    for job in jobs {
        if job.minutes > longest_window {
            return Err(ScheduleError::TooLong {
                task: job.id.clone(),
                minutes: job.minutes,
                window: longest_window,
            });
        }
        let ready = job
            .after
            .iter()
            .map(|&i| placed[i].1)
            .max()
            .unwrap_or(c.start)
            .max(c.start);
        let mut own = job.dataset_cap.map(|cap| {
            per_dataset
                .remove(job.dataset.as_str())
                .unwrap_or_else(|| Usage::new(cap))
        });
        let known = global.entry(job.minutes).or_default();
        let mut own_spans = own.is_some().then(|| {
            own_known
                .remove(&(job.dataset.as_str(), job.minutes))
                .unwrap_or_default()
        });
        let mut t = ready;
        let limit = c.start + HORIZON_MINUTES;
        // Where the current run of starts that fail a global test began.
        let mut failing_from: Option<Minute> = None;
        // Every jump skips only starts that cannot work, so the first `t`
        // that passes all four tests is the earliest possible start.
        loop {
            if t > limit {
                return Err(ScheduleError::NoSlot(job.id.clone(), job.minutes));
            }
            let end = t + job.minutes;
            let next = known
                .skip(t)
                .or_else(|| window_violation(&c.windows, t, end))
                .or_else(|| overlap_end(&busy_production, t, end))
                .or_else(|| running.full_until(t, end));
            if let Some(next) = next {
                failing_from.get_or_insert(t);
                t = next;
                continue;
            }
            if let Some(from) = failing_from.take() {
                known.insert(from, t);
            }
            let next = own_spans
                .as_ref()
                .and_then(|k| k.skip(t))
                .or_else(|| own.as_ref().and_then(|u| u.full_until(t, end)));
            match next {
                Some(next) => t = next,
                None => break,
            }
        }
        running.add(t, t + job.minutes);
        if let Some(mut u) = own.take() {
            u.add(t, t + job.minutes);
            per_dataset.insert(job.dataset.as_str(), u);
        }
        if let Some(mut k) = own_spans.take() {
            k.insert(ready, t);
            own_known.insert((job.dataset.as_str(), job.minutes), k);
        }
        placed.push((t, t + job.minutes));
    }
    let end = placed.iter().map(|p| p.1).max().unwrap_or(c.start);
    let windows_used = windows_used(&c.windows, &placed);
    if let Some(deadline) = c.deadline
        && end > deadline
    {
        return Err(ScheduleError::Deadline {
            windows: windows_used,
            concurrency: c.max_concurrency,
            end: display_minute(end),
            deadline: display_minute(deadline),
        });
    }
    let summary = ScheduleSummary {
        start: display_minute(c.start),
        end: display_minute(end),
        makespan_minutes: end - c.start,
        windows_used,
        max_concurrency: c.max_concurrency,
        blackouts: blackouts
            .iter()
            .filter(|&&(a, b)| a < end && c.start < b)
            .count(),
        windows: c.windows.clone(),
        blackout_spans: busy_production
            .iter()
            .filter(|&&(a, b)| a < end && c.start < b)
            .copied()
            .collect(),
        placed: Vec::new(),
    };
    Ok((placed, summary))
}

/// How many tasks run at each instant, and where that reaches the cap: what
/// lets a task find its slot without scanning every task placed before it
/// (scanning made 6,850 tasks take 17 s).
struct Usage {
    cap: u32,
    /// Tasks running from each key until the next one (none before the
    /// first key).
    level: BTreeMap<Minute, u32>,
    /// Spans at the cap.
    full: Spans,
}

impl Usage {
    fn new(cap: u32) -> Usage {
        Usage {
            cap: cap.max(1),
            level: BTreeMap::new(),
            full: Spans::default(),
        }
    }

    /// When `[t, end)` meets a span at the cap: the end of the last such
    /// span (no start before it can fit).
    fn full_until(&self, t: Minute, end: Minute) -> Option<Minute> {
        let (_, &until) = self.full.0.range(..end).next_back()?;
        (until > t).then_some(until)
    }

    /// Records a task running over `[start, end)`.
    fn add(&mut self, start: Minute, end: Minute) {
        if start >= end {
            return;
        }
        for at in [start, end] {
            let before = self.level.range(..=at).next_back().map_or(0, |(_, &l)| l);
            self.level.entry(at).or_insert(before);
        }
        let mut reached = Vec::new();
        let mut steps = self.level.range_mut(start..end).peekable();
        while let Some((&at, l)) = steps.next() {
            *l += 1;
            if *l == self.cap {
                let until = steps.peek().map_or(end, |(next, _)| **next);
                reached.push((at, until));
            }
        }
        for (a, b) in reached {
            self.full.insert(a, b);
        }
    }
}

/// Disjoint `[start, end)` spans, by start; touching spans are merged.
#[derive(Default)]
struct Spans(BTreeMap<Minute, Minute>);

impl Spans {
    /// The end of the span holding `t`, if one does.
    fn skip(&self, t: Minute) -> Option<Minute> {
        let (_, &e) = self.0.range(..=t).next_back()?;
        (e > t).then_some(e)
    }

    /// Adds `[a, b)`, merging neighbours.
    fn insert(&mut self, mut a: Minute, mut b: Minute) {
        if a >= b {
            return;
        }
        if let Some((&s, &e)) = self.0.range(..=a).next_back()
            && e >= a
        {
            a = s;
            b = b.max(e);
            self.0.remove(&s);
        }
        while let Some((&s, &e)) = self.0.range(a..).next()
            && s <= b
        {
            b = b.max(e);
            self.0.remove(&s);
        }
        self.0.insert(a, b);
    }
}

/// `spans` (sorted by start) merged into disjoint spans.
fn merged(spans: &[(Minute, Minute)]) -> Vec<(Minute, Minute)> {
    let mut out: Vec<(Minute, Minute)> = Vec::with_capacity(spans.len());
    for &(a, b) in spans {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// When `[t, end)` overlaps one of the disjoint sorted `spans`: the end of
/// the last one it overlaps.
fn overlap_end(spans: &[(Minute, Minute)], t: Minute, end: Minute) -> Option<Minute> {
    let before_end = spans.partition_point(|&(a, _)| a < end);
    let &(_, b) = spans[..before_end].last()?;
    (b > t).then_some(b)
}

fn window_length(from: i64, to: i64) -> i64 {
    if to > from {
        to - from
    } else {
        1440 - from + to
    }
}

/// `None` when `[t, end)` lies inside one occurrence of an allowed window;
/// otherwise the next instant worth trying.
fn window_violation(windows: &[(i64, i64)], t: Minute, end: Minute) -> Option<Minute> {
    if windows.is_empty() {
        return None;
    }
    let day = t.div_euclid(1440) * 1440;
    let mut next = i64::MAX;
    // Occurrences starting yesterday (crossing midnight), today, tomorrow.
    for offset in [-1440, 0, 1440] {
        for &(a, b) in windows {
            let s = day + offset + a;
            let e = s + window_length(a, b);
            if s <= t && end <= e {
                return None;
            }
            if s > t {
                next = next.min(s);
            }
        }
    }
    Some(if next == i64::MAX { t + 1 } else { next })
}

/// Distinct window occurrences (by start) that hold a task.
fn windows_used(windows: &[(i64, i64)], placed: &[(Minute, Minute)]) -> usize {
    if windows.is_empty() {
        let days: std::collections::BTreeSet<i64> =
            placed.iter().map(|p| p.0.div_euclid(1440)).collect();
        return days.len();
    }
    let mut used = std::collections::BTreeSet::new();
    for &(t, end) in placed {
        let day = t.div_euclid(1440) * 1440;
        'found: for offset in [-1440, 0, 1440] {
            for &(a, b) in windows {
                let s = day + offset + a;
                if s <= t && end <= s + window_length(a, b) {
                    used.insert(s);
                    break 'found;
                }
            }
        }
    }
    used.len()
}

/// Whether a dbt model's run writes `dataset`.
fn runs_by_dbt(g: &crate::graph::LineageGraph, dataset: &str) -> bool {
    g.writer(dataset).is_some_and(|j| j.kind.is_dbt())
}

/// Schedules the tasks of `doc` from `start` (minutes): fills each task's
/// `start` and `end` and the document's `schedule`. Durations: `cost`
/// minutes per partition from `ripple.yml` (default 5), a full rebuild
/// counting 12 partitions; blackouts: the production runs of `dags` and
/// `backfill.production`.
pub fn apply(
    doc: &mut super::PlanDocument,
    g: &crate::graph::LineageGraph,
    dags: &[crate::project::Dag],
    start: Minute,
    deadline: Option<Minute>,
) -> Result<(), ScheduleError> {
    let config = &g.config;
    // A DAG file that failed to read defines DAGs whose runs are unknown:
    // `--allow-partial` once let such a plan be scheduled over them.
    if let Some(d) = g.diagnostics.iter().find(|d| {
        d.severity == crate::project::Severity::Error
            && d.file.as_deref().is_some_and(|f| f.ends_with(".py"))
    }) {
        return Err(ScheduleError::UnreadableDagFile(d.to_string()));
    }
    let windows = config
        .backfill
        .windows
        .iter()
        .map(|w| crate::time::parse_window(w).ok_or_else(|| ScheduleError::BadWindow(w.clone())))
        .collect::<Result<Vec<_>, _>>()?;
    let index = doc.positions();
    let jobs: Vec<Job> = doc
        .tasks
        .iter()
        .map(|t| {
            let cfg = g.dataset(&t.task.dataset).and_then(|d| d.settings(config));
            let per_partition = cfg
                .and_then(|c| c.cost)
                .map_or(DEFAULT_COST_MINUTES, |c| (c.max(0.0).ceil() as i64).max(1));
            // A job that cannot take dates restates all its partitions in one
            // run, which costs at most what a full rebuild does.
            let partitions = if t.task.full {
                FULL_REBUILD_PARTITIONS
            } else if !super::takes_dates(g, &t.task.dataset) {
                (t.task.partitions as i64).min(FULL_REBUILD_PARTITIONS)
            } else {
                t.task.partitions as i64
            };
            Job {
                id: t.task.id.clone(),
                dataset: t.task.dataset.clone(),
                minutes: per_partition.saturating_mul(partitions.max(1)),
                after: t
                    .task
                    .depends_on
                    .iter()
                    .filter_map(|d| index.get(d.as_str()).copied())
                    .collect(),
                // dbt runs of one model share its temporary relations: one
                // at a time.
                dataset_cap: if runs_by_dbt(g, &t.task.dataset) {
                    Some(1)
                } else {
                    cfg.and_then(|c| c.max_concurrency)
                },
            }
        })
        .collect();
    let horizon_hours = (HORIZON_MINUTES / 60) + 1;
    let production = crate::schedule::production_schedule(
        dags,
        config,
        start.div_euclid(60),
        start.div_euclid(60) + horizon_hours,
    );
    if let Some(d) = production.not_scheduled.iter().find(|d| d.unreadable) {
        return Err(ScheduleError::UnknownProduction {
            dag: d.dag_id.clone(),
            why: d.why.clone(),
        });
    }
    let horizon_end = (start.div_euclid(60) + horizon_hours) * 60;
    let mut blackouts: Vec<(Minute, Minute)> = Vec::new();
    for d in &production.dags {
        blackouts.extend(d.runs.iter().map(|r| (r.start_minute, r.end_minute)));
        // Runs past the listing limit are still production: the rest of
        // the horizon is theirs, rather than free.
        if d.truncated {
            let from = d.runs.last().map_or(start, |r| r.start_minute);
            blackouts.push((from, horizon_end));
        }
    }
    let constraints = Constraints {
        start,
        max_concurrency: config
            .backfill
            .max_concurrency
            .unwrap_or(DEFAULT_MAX_CONCURRENCY)
            .max(1),
        windows,
        blackouts,
        deadline,
    };
    let (placed, mut summary) = schedule(&jobs, &constraints)?;
    for (t, &(s, e)) in doc.tasks.iter_mut().zip(&placed) {
        t.task.start = Some(display_minute(s));
        t.task.end = Some(display_minute(e));
    }
    summary.placed = placed;
    doc.schedule = Some(summary);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: &str, minutes: i64, after: &[usize]) -> Job {
        Job {
            id: id.into(),
            dataset: id.split('@').next().unwrap_or(id).into(),
            minutes,
            after: after.to_vec(),
            dataset_cap: None,
        }
    }

    #[test]
    fn windows_parse_and_cross_midnight() {
        use crate::time::parse_window;
        assert_eq!(parse_window("20:00-06:00"), Some((1200, 360)));
        assert_eq!(parse_window("08:30-17:00"), Some((510, 1020)));
        assert_eq!(parse_window("25:00-06:00"), None);
        assert_eq!(window_length(1200, 360), 600);
    }

    #[test]
    fn tasks_wait_for_windows_blackouts_dependencies_and_caps() {
        // Starting at noon: the overnight window opens at 20:00.
        let c = Constraints {
            start: 720,
            max_concurrency: 1,
            windows: vec![(1200, 360)],
            blackouts: vec![(1440 + 120, 1440 + 210)],
            deadline: None,
        };
        let jobs = [
            job("a@1", 60, &[]),
            job("a@2", 60, &[]),
            job("b@1", 120, &[0]),
        ];
        let (placed, summary) = schedule(&jobs, &c).unwrap();
        // Nothing before 20:00; one at a time; b after a@1.
        assert_eq!(placed[0], (1200, 1260));
        assert_eq!(placed[1], (1260, 1320));
        assert_eq!(placed[2], (1320, 1440));
        assert_eq!(summary.windows_used, 1);
    }

    #[test]
    fn too_long_and_past_deadline_fail_clearly() {
        let c = Constraints {
            start: 0,
            max_concurrency: 1,
            windows: vec![(1200, 1260)],
            blackouts: vec![],
            deadline: None,
        };
        let err = schedule(&[job("x", 120, &[])], &c).unwrap_err().to_string();
        assert!(err.contains("longest allowed window is 60 min"), "{err}");
        let c = Constraints {
            deadline: Some(1440),
            ..c
        };
        let jobs: Vec<Job> = (0..3).map(|i| job(&format!("t@{i}"), 60, &[])).collect();
        let err = schedule(&jobs, &c).unwrap_err().to_string();
        assert!(
            err.contains("needs 3 windows at max_concurrency 1"),
            "{err}"
        );
    }

    /// Brute force: every start minute from `ready` on, every minute of the
    /// run checked against the windows, production and both caps.
    fn brute_force(jobs: &[Job], c: &Constraints) -> Option<Vec<(Minute, Minute)>> {
        // Minutes some production run holds.
        let held: std::collections::HashSet<Minute> =
            c.blackouts.iter().flat_map(|&(a, b)| a..b).collect();
        let mut placed: Vec<(Minute, Minute)> = Vec::new();
        for job in jobs {
            let ready = job
                .after
                .iter()
                .map(|&i| placed[i].1)
                .max()
                .unwrap_or(c.start)
                .max(c.start);
            let fits = |t: Minute| {
                let end = t + job.minutes;
                let day = t.div_euclid(1440);
                let in_window = c.windows.is_empty()
                    || (day - 1..=day).any(|d| {
                        c.windows.iter().any(|&(a, b)| {
                            let len = if b > a { b - a } else { 1440 - a + b };
                            d * 1440 + a <= t && end <= d * 1440 + a + len
                        })
                    });
                let clear = || !(t..end).any(|p| held.contains(&p));
                let room = || {
                    (t..end).all(|p| {
                        let running: Vec<usize> = (0..placed.len())
                            .filter(|&i| placed[i].0 <= p && p < placed[i].1)
                            .collect();
                        let same = running
                            .iter()
                            .filter(|&&i| jobs[i].dataset == job.dataset)
                            .count();
                        running.len() < c.max_concurrency as usize
                            && job.dataset_cap.is_none_or(|cap| same < cap as usize)
                    })
                };
                in_window && clear() && room()
            };
            let t = (ready..=c.start + HORIZON_MINUTES).find(|&t| fits(t))?;
            placed.push((t, t + job.minutes));
        }
        Some(placed)
    }

    /// Production every `period` minutes for `busy` minutes, from `from` for
    /// `days` days.
    fn frequent_runs(period: i64, busy: i64, from: Minute, days: i64) -> Vec<(Minute, Minute)> {
        (0..days * 1440 / period)
            .map(|k| (from + k * period, from + k * period + busy))
            .collect()
    }

    #[test]
    fn frequent_production_runs_place_tasks_where_brute_force_does() {
        // 150 tasks of one or two minutes in three datasets (d0 one at a
        // time, d1 uncapped, d2 two at a time), some waiting for earlier
        // ones; production every three minutes for one and every ten for
        // four, so only one- and two-minute gaps are free, many too short.
        let jobs: Vec<Job> = (0..150)
            .map(|i| Job {
                id: format!("t{i}"),
                dataset: format!("d{}", i % 3),
                minutes: 1 + (i % 5 == 0) as i64,
                after: if i % 7 == 6 { vec![i - 4] } else { Vec::new() },
                dataset_cap: [Some(1), None, Some(2)][i % 3],
            })
            .collect();
        let mut blackouts = frequent_runs(3, 1, 0, 3);
        blackouts.extend(frequent_runs(10, 4, 1, 3));
        for cap in 1..=3 {
            for windows in [vec![], vec![(20 * 60, 6 * 60)], vec![(0, 90), (600, 700)]] {
                let c = Constraints {
                    start: 17 * 60,
                    max_concurrency: cap,
                    windows: windows.clone(),
                    blackouts: blackouts.clone(),
                    deadline: None,
                };
                let truth = brute_force(&jobs, &c).expect("every task fits");
                let (placed, _) = schedule(&jobs, &c).unwrap();
                assert_eq!(placed, truth, "cap {cap}, windows {windows:?}");
                // Late tasks start far past their readiness: the scan has
                // many production runs and placed tasks to jump over.
                assert!(placed[149].0 > c.start + 120, "{:?}", placed[149]);
            }
        }
    }

    use proptest::prelude::*;

    /// The scheduler as it was before `Usage`: every placed task scanned for
    /// each candidate start. Slow, but plainly right; the fast one must give
    /// the same starts.
    fn reference(jobs: &[Job], c: &Constraints) -> Option<Vec<(Minute, Minute)>> {
        let mut placed: Vec<(Minute, Minute)> = Vec::new();
        for job in jobs {
            let ready = job
                .after
                .iter()
                .map(|&i| placed[i].1)
                .max()
                .unwrap_or(c.start)
                .max(c.start);
            let mut t = ready;
            loop {
                if t > c.start + HORIZON_MINUTES {
                    return None;
                }
                let end = t + job.minutes;
                if let Some(next) = window_violation(&c.windows, t, end) {
                    t = next;
                    continue;
                }
                if let Some(&(_, b)) = c
                    .blackouts
                    .iter()
                    .filter(|&&(a, b)| a < end && t < b)
                    .max_by_key(|&&(_, b)| b)
                {
                    t = b;
                    continue;
                }
                let overlapping: Vec<usize> = (0..placed.len())
                    .filter(|&i| placed[i].0 < end && t < placed[i].1)
                    .collect();
                let busy_at = |p: Minute, same: bool| {
                    overlapping
                        .iter()
                        .filter(|&&i| placed[i].0 <= p && p < placed[i].1)
                        .filter(|&&i| !same || jobs[i].dataset == job.dataset)
                        .count() as u32
                };
                let mut points = vec![t];
                points.extend(
                    overlapping
                        .iter()
                        .map(|&i| placed[i].0)
                        .filter(|&s| s > t && s < end),
                );
                let blocked = points.into_iter().any(|p| {
                    busy_at(p, false) >= c.max_concurrency
                        || job.dataset_cap.is_some_and(|cap| busy_at(p, true) >= cap)
                });
                if blocked {
                    t = overlapping
                        .iter()
                        .map(|&i| placed[i].1)
                        .filter(|&e| e > t)
                        .min()
                        .unwrap();
                    continue;
                }
                break;
            }
            placed.push((t, t + job.minutes));
        }
        Some(placed)
    }

    fn jobs_strategy() -> impl Strategy<Value = Vec<Job>> {
        // Caps are per dataset, as ripple.yml sets them: d0 one at a time,
        // d1 two, d2 none.
        prop::collection::vec(
            (
                10i64..200,
                prop::collection::vec(any::<prop::sample::Index>(), 0..3),
                0usize..3,
            ),
            1..25,
        )
        .prop_map(|raw| {
            raw.into_iter()
                .enumerate()
                .map(|(i, (minutes, deps, ds))| Job {
                    id: format!("t{i}"),
                    dataset: format!("d{ds}"),
                    minutes,
                    after: if i == 0 {
                        Vec::new()
                    } else {
                        deps.iter().map(|d| d.index(i)).collect()
                    },
                    dataset_cap: [Some(1), Some(2), None][ds],
                })
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(128),
            ..ProptestConfig::default()
        })]

        #[test]
        fn schedules_respect_windows_blackouts_dependencies_and_caps(
            jobs in jobs_strategy(),
            cap in 1u32..4,
            window in prop::option::of((0i64..24, 4i64..14)),
            blackout_hours in prop::collection::vec(0i64..72, 0..6),
        ) {
            let windows: Vec<(i64, i64)> = window.map(|(h, len)| vec![(h * 60, (h + len) % 24 * 60)]).unwrap_or_default();
            let blackouts: Vec<(Minute, Minute)> = blackout_hours.iter().map(|h| (h * 60 + 5, h * 60 + 35)).collect();
            let c = Constraints { start: 0, max_concurrency: cap, windows: windows.clone(), blackouts: blackouts.clone(), deadline: None };
            let Ok((placed, _)) = schedule(&jobs, &c) else { return Ok(()) };
            for (i, (j, &(s, e))) in jobs.iter().zip(&placed).enumerate() {
                prop_assert!(s >= 0 && e == s + j.minutes);
                for &d in &j.after {
                    prop_assert!(placed[d].1 <= s, "t{} starts before t{} ends", i, d);
                }
                prop_assert!(window_violation(&windows, s, e).is_none(), "t{} outside the windows", i);
                prop_assert!(!blackouts.iter().any(|&(a, b)| a < e && s < b), "t{} overlaps production", i);
                let running = |p: Minute, same: bool| placed.iter().zip(&jobs).filter(|((a, b), o)| *a <= p && p < *b && (!same || o.dataset == j.dataset)).count() as u32;
                prop_assert!(running(s, false) <= cap, "global cap at t{}", i);
                if let Some(own) = j.dataset_cap {
                    prop_assert!(running(s, true) <= own, "dataset cap at t{}", i);
                }
            }
        }

        #[test]
        fn the_fast_scheduler_places_every_task_where_the_plain_one_does(
            jobs in jobs_strategy(),
            cap in 1u32..4,
            window in prop::option::of((0i64..24, 4i64..14)),
            blackout_hours in prop::collection::vec(0i64..72, 0..6),
            blackout_minutes in 10i64..200,
        ) {
            let windows: Vec<(i64, i64)> = window.map(|(h, len)| vec![(h * 60, (h + len) % 24 * 60)]).unwrap_or_default();
            // Long blackouts overlap each other, as runs of a busy DAG do.
            let blackouts: Vec<(Minute, Minute)> = blackout_hours.iter().map(|h| (h * 60 + 5, h * 60 + 5 + blackout_minutes)).collect();
            let c = Constraints { start: 0, max_concurrency: cap, windows, blackouts, deadline: None };
            let fast = schedule(&jobs, &c).ok().map(|(placed, _)| placed);
            prop_assert_eq!(fast, reference(&jobs, &c));
        }

        #[test]
        fn between_frequent_production_runs_the_fast_scheduler_matches_brute_force(
            jobs in jobs_strategy(),
            cap in 1u32..4,
            window in prop::option::of((0i64..24, 4i64..14)),
            period in 2i64..12,
            busy in 1i64..4,
        ) {
            // Short tasks, so that some fit between the runs.
            let jobs: Vec<Job> = jobs.into_iter().map(|j| Job { minutes: j.minutes % 4 + 1, ..j }).collect();
            let windows: Vec<(i64, i64)> = window.map(|(h, len)| vec![(h * 60, (h + len) % 24 * 60)]).unwrap_or_default();
            let busy = busy.min(period - 1);
            let c = Constraints { start: 0, max_concurrency: cap, windows, blackouts: frequent_runs(period, busy, 0, 3), deadline: None };
            let fast = schedule(&jobs, &c).ok().map(|(placed, _)| placed);
            prop_assert_eq!(fast, brute_force(&jobs, &c));
        }
    }
}
