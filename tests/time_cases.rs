//! The time cases (`tests/time_cases/<case>/`, layout in its README): small
//! warehouses whose partitions are shifted, windowed, re-keyed or re-zoned,
//! written from ripple's documentation alone. On the case's real engine this
//! proves, for every case:
//!
//! 1. `ripple impact` is never short: each partition the engine itself
//!    computes differently after the bad load lies inside the intervals
//!    ripple reports for its table.
//! 2. `ripple plan` is never wrong: its `--format shell` script, run on a
//!    copy of the bad warehouse whose sources were fixed, leaves every
//!    checked table equal to a from-scratch recompute on good data, row by
//!    row in each partition. Refusing to plan is allowed (and required when
//!    the case says `EXPECT_PLAN=refused`); a plan that runs must be right.
//!
//! Truth is the engine's: "good" runs seed.sql and the jobs, "bad" runs
//! seed.sql, corrupt.sql and the jobs; the partitions whose rows differ are
//! the ones the bad load reached.

#[path = "support/db.rs"]
mod db;
#[path = "support/engines.rs"]
mod engines;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::Instant;

use db::Db;
use jiff::ToSpan;
use jiff::civil::{Date, DateTime, Time};
use serde_json::Value;

#[test]
fn every_time_case_is_never_short_and_never_wrong() {
    let started = Instant::now();
    // Asked once, so a missing engine prints one `skipped:` line (or fails
    // under CI=true) rather than one per case.
    let present = Present {
        duckdb: engines::require(engines::duckdb(), "the DuckDB CLI").is_some(),
        postgres: engines::require(engines::postgres(), "PostgreSQL").is_some(),
    };
    let dirs = case_dirs();
    assert!(
        !dirs.is_empty(),
        "no cases under {}",
        cases_root().display()
    );
    let reports = run_all(dirs, present);
    print_summary(&reports, started);
    let failures: Vec<String> = reports
        .iter()
        .filter_map(|r| r.failure().map(|why| format!("{}: {why}", r.case)))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} time cases failed:\n  {}",
        failures.len(),
        reports.len(),
        failures.join("\n  ")
    );
}

fn cases_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/time_cases")
}

/// Every case folder, by name.
fn case_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(cases_root())
        .expect("tests/time_cases")
        .map(|entry| entry.expect("tests/time_cases entry").path())
        .filter(|path| path.is_dir())
        .collect();
    dirs.sort();
    dirs
}

// ---------------------------------------------------------------------------
// Running the cases
// ---------------------------------------------------------------------------

/// Which engines this run has.
#[derive(Clone, Copy)]
struct Present {
    duckdb: bool,
    postgres: bool,
}

/// Every case, a few at a time: each has its own databases and work folder,
/// and one by one they take about a minute, mostly waiting on the engines.
fn run_all(dirs: Vec<PathBuf>, present: Present) -> Vec<Report> {
    let queue = Mutex::new(dirs.into_iter());
    let reports = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(4, usize::from);
    std::thread::scope(|scope| {
        for _ in 0..workers.min(8) {
            scope.spawn(|| {
                while let Some(dir) = next_case(&queue) {
                    let report = run_case_guarded(&dir, present);
                    reports.lock().unwrap().push(report);
                }
            });
        }
    });
    let mut reports = reports.into_inner().unwrap();
    reports.sort_by(|a, b| a.case.cmp(&b.case));
    reports
}

// A function of its own so the lock is released before the case runs (in a
// `while let` scrutinee the guard would live through the loop body).
fn next_case(queue: &Mutex<std::vec::IntoIter<PathBuf>>) -> Option<PathBuf> {
    queue.lock().unwrap().next()
}

/// [`run_case`], a panic in it (a database that cannot be made, say) turned
/// into that case's harness error so the other cases still report.
fn run_case_guarded(dir: &Path, present: Present) -> Report {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    catch_unwind(AssertUnwindSafe(|| run_case(dir, present))).unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panicked".to_string());
        let mut report = Report::new(name);
        report.error = Some(format!("panicked: {message}"));
        report
    })
}

fn run_case(dir: &Path, present: Present) -> Report {
    let mut report = Report::new(dir.file_name().unwrap().to_string_lossy().into_owned());
    let case = match Case::load(dir) {
        Ok(case) => case,
        Err(error) => {
            report.error = Some(error);
            return report;
        }
    };
    report.engine = case.engine.label();
    let have = match case.engine {
        Engine::Duck => present.duckdb,
        Engine::Pg => present.postgres,
    };
    if !have {
        report.skipped = true;
        return report;
    }
    let work = tempfile::Builder::new()
        .prefix(&format!("ripple-time-case-{}-", case.name))
        .tempdir()
        .expect("work folder");
    if let Err(error) = check_case(&case, work.path(), &mut report) {
        report.error = Some(error);
    }
    if report.failure().is_some() {
        // The impact JSON, plan script and its output, for whoever debugs it.
        report
            .log
            .push(format!("work files kept in {}", work.keep().display()));
    }
    report
}

/// Both checks of one case; `Err` is the harness's own failure (a seed or
/// job that does not run, a table that cannot be read).
fn check_case(case: &Case, work: &Path, report: &mut Report) -> Result<(), String> {
    report.expect_refused = case.expects_refusal()?;
    let warehouse = Warehouse::open(case.engine);
    warehouse.build(case)?;
    let good = warehouse.export_all(&warehouse.good, case)?;
    let bad = warehouse.export_all(&warehouse.bad, case)?;
    let truth: Vec<(String, Vec<String>)> = case
        .parts
        .iter()
        .map(|(table, _)| (table.clone(), changed_keys(&good[table], &bad[table])))
        .collect();
    note_unchecked(case, &warehouse, report)?;
    check_impact(case, &truth, work, report)?;
    if case.plans()? {
        check_plan(case, &warehouse, &good, work, report)?;
    }
    Ok(())
}

/// Tables the jobs make that `parts` does not list: a hint to the case's
/// author, not a failure.
fn note_unchecked(case: &Case, warehouse: &Warehouse, report: &mut Report) -> Result<(), String> {
    let listed: BTreeSet<String> = case.parts.iter().map(|(t, _)| t.to_lowercase()).collect();
    let sources: BTreeSet<String> = case
        .optional("SOURCES")
        .split(',')
        .map(str::to_lowercase)
        .collect();
    let unchecked: Vec<String> = warehouse
        .relations(&warehouse.good)?
        .into_iter()
        .filter(|t| !listed.contains(t) && !sources.contains(t))
        .collect();
    if !unchecked.is_empty() {
        report
            .notes
            .push(format!("tables not checked: {unchecked:?}"));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// The impact check
// ---------------------------------------------------------------------------

/// Every partition the engine changed must be covered by ripple's intervals
/// for its table.
fn check_impact(
    case: &Case,
    truth: &[(String, Vec<String>)],
    work: &Path,
    report: &mut Report,
) -> Result<(), String> {
    let mut args = case.ripple_args("impact")?;
    args.extend(["--format", "json"].map(String::from));
    let output = ripple(&args)?;
    let _ = std::fs::write(work.join("impact.json"), &output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr).trim().to_string();
    let datasets = if output.status.success() {
        if !stderr.is_empty() {
            report
                .notes
                .push(format!("impact stderr: {}", head(&stderr, 500)));
        }
        datasets_by_name(&output.stdout)?
    } else {
        report.impact = Some(ImpactVerdict::Exit(output.status.to_string()));
        report
            .log
            .push(format!("impact {}: {stderr}", output.status));
        // Still compared, as if ripple had named nothing, to show what a
        // failed run would have missed.
        BTreeMap::new()
    };
    let mut short = false;
    for (table, keys) in truth {
        let dataset = datasets.get(&table.to_lowercase());
        let mut missing = Vec::new();
        for key in keys {
            let point = parse_point(key).map_err(|e| format!("{table}: {e}"))?;
            if !dataset.map_or(Ok(false), |d| covered(point, d))? {
                missing.push(key.as_str());
            }
        }
        short |= !missing.is_empty();
        report.log.push(format!(
            "{:5} {table}: engine changed {} partitions{}; ripple {}{}",
            if missing.is_empty() { "ok" } else { "SHORT" },
            keys.len(),
            span_of(keys),
            dataset.map_or("(not in impact)".to_string(), describe_dataset),
            if missing.is_empty() {
                String::new()
            } else {
                format!("; MISSING {missing:?}")
            }
        ));
    }
    if report.impact.is_none() {
        report.impact = Some(if short {
            ImpactVerdict::Short
        } else {
            ImpactVerdict::Pass
        });
    }
    Ok(())
}

/// The impact's datasets, each under its relation, name and id (lowercased:
/// `parts` may spell a table as the engine folds it).
fn datasets_by_name(json: &[u8]) -> Result<BTreeMap<String, Value>, String> {
    let doc: Value =
        serde_json::from_slice(json).map_err(|e| format!("impact printed invalid JSON: {e}"))?;
    let mut by_name = BTreeMap::new();
    for dataset in doc["datasets"].as_array().into_iter().flatten() {
        for field in ["relation", "name", "id"] {
            if let Some(name) = dataset[field].as_str().filter(|n| !n.is_empty()) {
                by_name.insert(name.to_lowercase(), dataset.clone());
            }
        }
    }
    Ok(by_name)
}

/// Whether the partition holding `point` is in one of `dataset`'s intervals
/// (a `null` bound is open).
fn covered(point: DateTime, dataset: &Value) -> Result<bool, String> {
    if dataset["full"].as_bool() == Some(true) {
        return Ok(true);
    }
    let grain = dataset["grain"].as_str().unwrap_or("");
    for interval in dataset["intervals"].as_array().into_iter().flatten() {
        let from = bound(&interval["from"], grain)?.map(|(start, _)| start);
        let to = bound(&interval["to"], grain)?.map(|(_, end)| end);
        if from.is_none_or(|from| from <= point) && to.is_none_or(|to| point < to) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The span of the partition an interval bound names, `None` when open.
fn bound(key: &Value, grain: &str) -> Result<Option<(DateTime, DateTime)>, String> {
    match key {
        Value::Null => Ok(None),
        Value::String(key) => partition_span(key, grain).map(Some),
        other => Err(format!("impact interval bound {other} is not a key")),
    }
}

/// `[start, end)` of the partition `key` of `grain`, keyed as ripple prints
/// them: `2026-01-10T05`, `2026-01-10` (a week by its Monday), `2026-01`,
/// `2026`.
fn partition_span(key: &str, grain: &str) -> Result<(DateTime, DateTime), String> {
    let date = |text: String| text.parse::<Date>().ok().map(|d| d.at(0, 0, 0, 0));
    let (start, length) = match grain {
        "hour" if key.contains('T') => (parse_point(key).ok(), 1.hour()),
        "day" => (date(key.to_string()), 1.day()),
        "week" => (date(key.to_string()), 1.week()),
        "month" => (date(format!("{key}-01")), 1.month()),
        "year" => (date(format!("{key}-01-01")), 1.year()),
        _ => (None, 0.days()),
    };
    let start = start.ok_or_else(|| format!("impact bound {key:?} is not a {grain:?} key"))?;
    let end = start.checked_add(length).map_err(|e| e.to_string())?;
    Ok((start, end))
}

/// A partition point as `parts` gives it: `YYYY-MM-DD`, or with an hour,
/// `YYYY-MM-DDTHH` (a space for the `T` and anything after the hour are
/// allowed, so a timestamp cast to text works).
fn parse_point(text: &str) -> Result<DateTime, String> {
    let text = text.trim();
    let bad = || format!("partition point {text:?} is neither YYYY-MM-DD nor YYYY-MM-DDTHH");
    let date: Date = text
        .get(..10)
        .and_then(|d| d.parse().ok())
        .ok_or_else(bad)?;
    if text.len() <= 10 {
        return Ok(date.at(0, 0, 0, 0));
    }
    let hour = match (text.get(10..11), text.get(11..13)) {
        (Some("T" | " "), Some(hour)) => hour.parse::<i8>().map_err(|_| bad())?,
        _ => return Err(bad()),
    };
    let time = Time::new(hour, 0, 0, 0).map_err(|_| bad())?;
    Ok(date.to_datetime(time))
}

/// `grain from..to,...` or `full`, for the log.
fn describe_dataset(dataset: &Value) -> String {
    if dataset["full"].as_bool() == Some(true) {
        return "full".to_string();
    }
    let bound = |v: &Value| v.as_str().unwrap_or("open").to_string();
    let intervals: Vec<String> = dataset["intervals"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|iv| format!("{}..{}", bound(&iv["from"]), bound(&iv["to"])))
        .collect();
    format!(
        "{} {}",
        dataset["grain"].as_str().unwrap_or("?"),
        intervals.join(",")
    )
}

fn span_of(keys: &[String]) -> String {
    match (keys.first(), keys.last()) {
        (Some(first), Some(last)) => format!(" {first}..{last}"),
        _ => String::new(),
    }
}

// ---------------------------------------------------------------------------
// The plan check
// ---------------------------------------------------------------------------

/// Production is the bad warehouse with its sources fixed; once the plan's
/// script has run there, each checked table must equal the good recompute.
fn check_plan(
    case: &Case,
    warehouse: &Warehouse,
    good: &BTreeMap<String, Partitions>,
    work: &Path,
    report: &mut Report,
) -> Result<(), String> {
    warehouse.copy_bad_to_prod()?;
    run_script(&warehouse.prod, case, "fix.sql")?;
    let script = work.join("plan.sh");
    let mut args = case.ripple_args("plan")?;
    args.extend(["--format", "shell", "-o"].map(String::from));
    args.push(script.to_string_lossy().into_owned());
    args.extend(
        case.optional("PLANARGS")
            .split_whitespace()
            .map(String::from),
    );
    let planned = ripple(&args)?;
    let stderr = String::from_utf8_lossy(&planned.stderr).trim().to_string();
    if !planned.status.success() {
        report.plan = Some(PlanVerdict::Refused);
        report
            .log
            .push(format!("plan refused ({}): {stderr}", planned.status));
        return Ok(());
    }
    if !stderr.is_empty() {
        report
            .notes
            .push(format!("plan stderr: {}", head(&stderr, 800)));
    }
    let ran = run_plan_script(&script, warehouse, work)?;
    if !ran.status.success() {
        let stderr = String::from_utf8_lossy(&ran.stderr).trim().to_string();
        let said = if stderr.is_empty() {
            String::from_utf8_lossy(&ran.stdout).trim().to_string()
        } else {
            stderr
        };
        report.plan = Some(PlanVerdict::RunFailed);
        report
            .log
            .push(format!("plan script {}: {}", ran.status, tail(&said, 1500)));
        return Ok(());
    }
    let prod = warehouse.export_all(&warehouse.prod, case)?;
    let mut wrong = false;
    for (table, _) in &case.parts {
        let keys = changed_keys(&good[table], &prod[table]);
        if !keys.is_empty() {
            wrong = true;
            report.log.push(format!(
                "WRONG {table}: prod differs from the recompute in {keys:?}"
            ));
        }
    }
    note_leftovers(warehouse, report)?;
    report.plan = Some(if wrong {
        PlanVerdict::WrongPlan
    } else {
        PlanVerdict::Pass
    });
    Ok(())
}

/// `bash plan.sh` on prod, its output saved next to it.
fn run_plan_script(script: &Path, warehouse: &Warehouse, work: &Path) -> Result<Output, String> {
    let ran = Command::new("bash")
        .arg(script)
        .env("RIPPLE_SQL", warehouse.prod.command())
        .output()
        .map_err(|e| format!("cannot run bash: {e}"))?;
    let mut saved = ran.stdout.clone();
    saved.extend_from_slice(b"\n--stderr--\n");
    saved.extend_from_slice(&ran.stderr);
    let _ = std::fs::write(work.join("plan.out"), saved);
    Ok(ran)
}

/// Relations the plan left in prod that a recompute does not make (shadow
/// tables not cleaned up, say): worth a look, not a failure.
fn note_leftovers(warehouse: &Warehouse, report: &mut Report) -> Result<(), String> {
    let good = warehouse.relations(&warehouse.good)?;
    let left: Vec<String> = warehouse
        .relations(&warehouse.prod)?
        .difference(&good)
        .cloned()
        .collect();
    if !left.is_empty() {
        report
            .notes
            .push(format!("leftover relations after the plan: {left:?}"));
    }
    Ok(())
}

/// Runs the binary under test.
fn ripple(args: &[String]) -> Result<Output, String> {
    Command::new(env!("CARGO_BIN_EXE_ripple"))
        .args(args)
        .output()
        .map_err(|e| format!("cannot run ripple: {e}"))
}

// ---------------------------------------------------------------------------
// A case folder
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum Engine {
    Duck,
    Pg,
}

impl Engine {
    fn label(self) -> &'static str {
        match self {
            Engine::Duck => "duckdb",
            Engine::Pg => "postgres",
        }
    }
}

struct Case {
    name: String,
    dir: PathBuf,
    /// case.env's variables.
    env: BTreeMap<String, String>,
    engine: Engine,
    /// Each checked table with the SQL giving a row's partition point.
    parts: Vec<(String, String)>,
    /// The jobs in the order a recompute runs them.
    jobs: Vec<PathBuf>,
}

impl Case {
    fn load(dir: &Path) -> Result<Case, String> {
        let read = |file: &str| {
            std::fs::read_to_string(dir.join(file)).map_err(|e| format!("{file}: {e}"))
        };
        let mut env = BTreeMap::new();
        for line in read("case.env")?.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (name, value) = line
                .split_once('=')
                .ok_or_else(|| format!("case.env: {line:?} is not NAME=value"))?;
            env.insert(name.trim().to_string(), value.trim().to_string());
        }
        let engine = match env.get("ENGINE").map(String::as_str) {
            Some("duckdb") => Engine::Duck,
            Some("postgres") => Engine::Pg,
            other => {
                return Err(format!(
                    "case.env: ENGINE={other:?}, not duckdb or postgres"
                ));
            }
        };
        let mut parts = Vec::new();
        for line in read("parts")?.lines() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            // A third column (the grain, for people) is allowed and unused.
            let mut cols = line.split('\t');
            let (Some(table), Some(key)) = (cols.next(), cols.next()) else {
                return Err(format!("parts: {line:?} is not table<TAB>expression"));
            };
            parts.push((table.to_string(), key.to_string()));
        }
        let mut jobs: Vec<PathBuf> = std::fs::read_dir(dir.join("jobs"))
            .map_err(|e| format!("jobs/: {e}"))?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|path| path.extension().is_some_and(|ext| ext == "sql"))
            .collect();
        jobs.sort();
        Ok(Case {
            name: dir.file_name().unwrap().to_string_lossy().into_owned(),
            dir: dir.to_path_buf(),
            env,
            engine,
            parts,
            jobs,
        })
    }

    fn required(&self, name: &str) -> Result<&str, String> {
        self.env
            .get(name)
            .map(String::as_str)
            .ok_or_else(|| format!("case.env has no {name}"))
    }

    fn optional(&self, name: &str) -> &str {
        self.env.get(name).map_or("", String::as_str)
    }

    fn plans(&self) -> Result<bool, String> {
        match self.optional("PLAN") {
            "1" => Ok(true),
            "0" | "" => Ok(false),
            other => Err(format!("case.env: PLAN={other}, not 0 or 1")),
        }
    }

    /// `EXPECT_PLAN=refused`: a plan that runs (even a right one) fails the
    /// case. Any other value is a typo, not a silent pass.
    fn expects_refusal(&self) -> Result<bool, String> {
        match self.optional("EXPECT_PLAN") {
            "" => Ok(false),
            "refused" if self.plans()? => Ok(true),
            "refused" => Err("case.env: EXPECT_PLAN=refused needs PLAN=1".to_string()),
            other => Err(format!(
                "case.env: EXPECT_PLAN={other}, only `refused` is known"
            )),
        }
    }

    /// `ripple <command> SRC... --from --to --as-of --project --no-cache`.
    fn ripple_args(&self, command: &str) -> Result<Vec<String>, String> {
        let mut args = vec![command.to_string()];
        args.extend(self.required("SRC")?.split_whitespace().map(String::from));
        for (flag, var) in [("--from", "FROM"), ("--to", "TO"), ("--as-of", "ASOF")] {
            args.push(flag.to_string());
            args.push(self.required(var)?.to_string());
        }
        args.push("--project".to_string());
        args.push(self.dir.to_string_lossy().into_owned());
        // A warm cache shared between runs could hide a change to the code.
        args.push("--no-cache".to_string());
        Ok(args)
    }
}

// ---------------------------------------------------------------------------
// The warehouses
// ---------------------------------------------------------------------------

/// Each checked table's rows, by partition key: a multiset of normalised
/// rows per key (row order and identity draws are the engine's business).
type Partitions = BTreeMap<String, BTreeMap<Vec<Option<String>>, usize>>;

/// The three databases of a case, throw-away ones from `engines` (a
/// PostgreSQL name carries the process id; every one is dropped when this is,
/// a panicking case included).
struct Warehouse {
    engine: Engine,
    good: Db,
    bad: Db,
    prod: Db,
}

impl Warehouse {
    /// Called only for an engine found present, so a missing one here is a
    /// harness failure.
    fn open(engine: Engine) -> Warehouse {
        let make = || {
            match engine {
                Engine::Duck => engines::duckdb().map(Db::Duck),
                Engine::Pg => engines::postgres().map(Db::Pg),
            }
            .expect("the engine was found at the start of the test")
        };
        Warehouse {
            engine,
            good: make(),
            bad: make(),
            prod: make(),
        }
    }

    /// Good: seed, jobs. Bad: seed, corrupt, jobs; with `BAD_MODE=rerun`,
    /// seed, jobs, corrupt, jobs (production ran before the bad load and
    /// again after it: upserts and merges keep what the first run wrote).
    fn build(&self, case: &Case) -> Result<(), String> {
        let jobs = |db: &Db| -> Result<(), String> {
            for job in &case.jobs {
                let job = job.strip_prefix(&case.dir).unwrap_or(job);
                run_script(db, case, &job.to_string_lossy())?;
            }
            Ok(())
        };
        let rerun = case.optional("BAD_MODE") == "rerun";
        for (db, corrupt) in [(&self.good, false), (&self.bad, true)] {
            run_script(db, case, "seed.sql")?;
            if corrupt && rerun {
                jobs(db)?;
            }
            if corrupt {
                run_script(db, case, "corrupt.sql")?;
            }
            jobs(db)?;
        }
        Ok(())
    }

    /// Prod becomes an exact copy of bad (a re-run of the jobs could draw
    /// other identity values or order ties differently).
    fn copy_bad_to_prod(&self) -> Result<(), String> {
        match (&self.bad, &self.prod) {
            (Db::Duck(bad), Db::Duck(prod)) => {
                // The CLI checkpoints on exit, but a WAL left behind holds
                // data too.
                for suffix in ["", ".wal"] {
                    let from = PathBuf::from(format!("{}{suffix}", bad.path().display()));
                    let to = PathBuf::from(format!("{}{suffix}", prod.path().display()));
                    if from.exists() {
                        std::fs::copy(&from, &to).map_err(|e| format!("copy to prod: {e}"))?;
                    }
                }
                Ok(())
            }
            (Db::Pg(bad), Db::Pg(prod)) => {
                // Through good's connection: a template may have no session
                // (so not bad's), and prod cannot drop itself. Prod keeps its
                // name, so its own drop at the end still removes it.
                let admin = |sql: String| self.good.run(&sql).map_err(|e| format!("{sql}: {e}"));
                admin(format!(
                    "drop database if exists {} with (force)",
                    prod.database()
                ))?;
                admin(format!(
                    "create database {} template {}",
                    prod.database(),
                    bad.database()
                ))?;
                Ok(())
            }
            _ => unreachable!("one engine per warehouse"),
        }
    }

    /// Every `parts` table of `db`.
    fn export_all(&self, db: &Db, case: &Case) -> Result<BTreeMap<String, Partitions>, String> {
        case.parts
            .iter()
            .map(|(table, key)| Ok((table.clone(), self.export(db, table, key)?)))
            .collect()
    }

    /// `table`'s rows by partition key. As CSV through `copy`, which keeps
    /// NULL (unquoted empty) apart from '' (quoted) and survives commas and
    /// newlines in values.
    fn export(&self, db: &Db, table: &str, key: &str) -> Result<Partitions, String> {
        let sql = match self.engine {
            Engine::Duck => format!(
                "copy (select cast(({key}) as varchar) as __k, * from {table}) \
                 to '/dev/stdout' (format csv, header false)"
            ),
            // UTC so timestamptz values print the same whatever the
            // cluster's default zone.
            Engine::Pg => format!(
                "set timezone = 'UTC'; \
                 copy (select cast(({key}) as text) as __k, * from {table}) \
                 to stdout with (format csv)"
            ),
        };
        let text = db.run(&sql).map_err(|e| format!("reading {table}: {e}"))?;
        let mut partitions = Partitions::new();
        for mut row in parse_csv(&text).map_err(|e| format!("reading {table}: {e}"))? {
            let key = row.remove(0).unwrap_or_else(|| "NULL".to_string());
            let row = row.into_iter().map(|v| v.map(|v| normalise(&v))).collect();
            *partitions.entry(key).or_default().entry(row).or_default() += 1;
        }
        Ok(partitions)
    }

    /// `schema.name` of every table and view in `db`, lowercased.
    fn relations(&self, db: &Db) -> Result<BTreeSet<String>, String> {
        let sql = match self.engine {
            Engine::Duck => {
                "select schema_name || '.' || table_name from duckdb_tables() \
                 union all select schema_name || '.' || view_name from duckdb_views() \
                 where not internal"
            }
            Engine::Pg => {
                "select schemaname || '.' || tablename from pg_tables \
                 where schemaname not in ('pg_catalog', 'information_schema') \
                 union all select schemaname || '.' || viewname from pg_views \
                 where schemaname not in ('pg_catalog', 'information_schema')"
            }
        };
        let text = db.run(sql).map_err(|e| format!("listing relations: {e}"))?;
        Ok(text
            .lines()
            .map(|l| l.trim().to_lowercase())
            .filter(|l| !l.is_empty())
            .collect())
    }
}

/// Runs the case's `file` on `db`; the first error stops it.
fn run_script(db: &Db, case: &Case, file: &str) -> Result<(), String> {
    let sql = std::fs::read_to_string(case.dir.join(file)).map_err(|e| format!("{file}: {e}"))?;
    db.run_file(&sql)
        .map(drop)
        .map_err(|e| format!("{file} failed: {}", head(&e, 2000)))
}

/// The partition keys whose rows differ between `a` and `b` (a key on one
/// side only included).
fn changed_keys(a: &Partitions, b: &Partitions) -> Vec<String> {
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter(|key| a.get(*key) != b.get(*key))
        .cloned()
        .collect()
}

/// A value as compared: floats to 9 significant digits, since a plan may sum
/// in another order than the recompute (`0.30000000000000004` against
/// `0.3`). Only values with a `.` or an exponent, so integers and keys stay
/// exact.
fn normalise(value: &str) -> String {
    if value.contains(['.', 'e', 'E'])
        && let Ok(number) = value.parse::<f64>()
    {
        return format!("{number:.8e}");
    }
    value.to_string()
}

/// RFC 4180 records; an unquoted empty field is `None` (both engines' `copy`
/// writes NULL so, and an empty string as `""`).
fn parse_csv(text: &str) -> Result<Vec<Vec<Option<String>>>, String> {
    let mut rows = Vec::new();
    let mut chars = text.chars().peekable();
    while chars.peek().is_some() {
        let mut row = Vec::new();
        loop {
            let mut field = String::new();
            let quoted = chars.peek() == Some(&'"');
            if quoted {
                chars.next();
                loop {
                    match chars.next() {
                        Some('"') if chars.peek() == Some(&'"') => {
                            chars.next();
                            field.push('"');
                        }
                        Some('"') => break,
                        Some(c) => field.push(c),
                        None => return Err("unterminated quoted CSV field".to_string()),
                    }
                }
            }
            while let Some(&c) = chars.peek() {
                if c == ',' || c == '\n' {
                    break;
                }
                chars.next();
                if c != '\r' {
                    field.push(c);
                }
            }
            row.push((quoted || !field.is_empty()).then_some(field));
            if chars.next() != Some(',') {
                break;
            }
        }
        rows.push(row);
    }
    Ok(rows)
}

// ---------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------

enum ImpactVerdict {
    Pass,
    Short,
    /// Ripple exited non-zero (its status).
    Exit(String),
}

#[derive(PartialEq)]
enum PlanVerdict {
    Pass,
    Refused,
    RunFailed,
    WrongPlan,
}

impl fmt::Display for ImpactVerdict {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            ImpactVerdict::Pass => f.pad("PASS"),
            ImpactVerdict::Short => f.pad("SHORT"),
            ImpactVerdict::Exit(_) => f.pad("EXIT"),
        }
    }
}

impl fmt::Display for PlanVerdict {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.pad(match self {
            PlanVerdict::Pass => "PASS",
            PlanVerdict::Refused => "REFUSED",
            PlanVerdict::RunFailed => "RUN-FAILED",
            PlanVerdict::WrongPlan => "WRONG-PLAN",
        })
    }
}

/// What one case found.
struct Report {
    case: String,
    engine: &'static str,
    skipped: bool,
    impact: Option<ImpactVerdict>,
    /// `None` when the case does not plan (or stopped before).
    plan: Option<PlanVerdict>,
    expect_refused: bool,
    /// The harness's own failure.
    error: Option<String>,
    /// Printed for every case.
    notes: Vec<String>,
    /// Printed when the case fails.
    log: Vec<String>,
}

impl Report {
    fn new(case: String) -> Report {
        Report {
            case,
            engine: "?",
            skipped: false,
            impact: None,
            plan: None,
            expect_refused: false,
            error: None,
            notes: Vec::new(),
            log: Vec::new(),
        }
    }

    /// Why the case fails, `None` when it does not.
    fn failure(&self) -> Option<String> {
        let mut why = Vec::new();
        if let Some(error) = &self.error {
            // Its first line only: the list stays one line per case, and the
            // whole message is printed with the case's details.
            let first = error.lines().next().unwrap_or_default();
            why.push(format!("harness error: {first}"));
        }
        match &self.impact {
            Some(ImpactVerdict::Short) => why.push("impact SHORT".to_string()),
            Some(ImpactVerdict::Exit(status)) => why.push(format!("impact {status}")),
            _ => {}
        }
        match &self.plan {
            Some(PlanVerdict::RunFailed) => why.push("plan RUN-FAILED".to_string()),
            Some(PlanVerdict::WrongPlan) => why.push("plan WRONG-PLAN".to_string()),
            Some(plan) if self.expect_refused && *plan != PlanVerdict::Refused => {
                why.push(format!("plan {plan}, but the case expects REFUSED"));
            }
            _ => {}
        }
        (!why.is_empty()).then(|| why.join("; "))
    }

    /// `c01_lag_wow  duckdb  impact PASS  plan PASS`.
    fn line(&self) -> String {
        let verdicts = if self.skipped {
            "SKIPPED (engine missing)".to_string()
        } else {
            let impact = self
                .impact
                .as_ref()
                .map_or("-".to_string(), |v| v.to_string());
            let plan = self
                .plan
                .as_ref()
                .map_or("-".to_string(), |v| v.to_string());
            let error = if self.error.is_some() {
                "  HARNESS-ERROR"
            } else {
                ""
            };
            format!("impact {impact:5}  plan {plan:10}{error}")
        };
        format!("{:36} {:8} {verdicts}", self.case, self.engine)
            .trim_end()
            .to_string()
    }
}

fn print_summary(reports: &[Report], started: Instant) {
    println!("time cases:");
    for report in reports {
        println!("  {}", report.line());
        for note in &report.notes {
            println!("      note: {note}");
        }
        if report.failure().is_some() {
            for line in &report.log {
                println!("      {}", indent(line));
            }
            if let Some(error) = &report.error {
                println!("      HARNESS-ERROR: {}", indent(error));
            }
        }
    }
    let count = |pick: &dyn Fn(&Report) -> bool| reports.iter().filter(|r| pick(r)).count();
    let plan_is = |v: PlanVerdict| move |r: &Report| r.plan.as_ref() == Some(&v);
    println!(
        "time cases: {} run, {} skipped in {:.0?}; impact PASS {}, SHORT {}, exit non-zero {}; \
         plan PASS {}, REFUSED {}, WRONG-PLAN {}, RUN-FAILED {}; harness errors {}",
        count(&|r| !r.skipped),
        count(&|r| r.skipped),
        started.elapsed(),
        count(&|r| matches!(r.impact, Some(ImpactVerdict::Pass))),
        count(&|r| matches!(r.impact, Some(ImpactVerdict::Short))),
        count(&|r| matches!(r.impact, Some(ImpactVerdict::Exit(_)))),
        count(&plan_is(PlanVerdict::Pass)),
        count(&plan_is(PlanVerdict::Refused)),
        count(&plan_is(PlanVerdict::WrongPlan)),
        count(&plan_is(PlanVerdict::RunFailed)),
        count(&|r| r.error.is_some()),
    );
}

/// `text` with its later lines indented under a detail line's first.
fn indent(text: &str) -> String {
    text.replace('\n', "\n        ")
}

/// The first `n` characters of `text`.
fn head(text: &str, n: usize) -> String {
    text.chars().take(n).collect()
}

/// The last `n` characters of `text`.
fn tail(text: &str, n: usize) -> String {
    let skip = text.chars().count().saturating_sub(n);
    text.chars().skip(skip).collect()
}
