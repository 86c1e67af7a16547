//! The `ripple` command line: arguments in, one library call, output out.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use std::collections::BTreeSet;

use ripple::emit;
use ripple::graph::{LineageGraph, Selector};
use ripple::impact::ImpactRequest;
use ripple::ingest::{LoadOptions, load_project};
use ripple::input::{self, STDIN_LABEL};
use ripple::sql::{SqlDialect, script_lineage};
use ripple::time::TimeKey;

mod progress;

/// Exit code for bad input or usage (clap uses it too).
const EXIT_BAD_INPUT: u8 = 2;

#[derive(Parser)]
#[command(
    name = "ripple",
    version,
    about = "Lineage-aware impact analysis and backfill planning for SQL, dbt and Airflow pipelines",
    after_help = "Examples:\n  ripple lineage fixtures/sql/warehouse_load.sql --dialect postgres\n  ripple graph --project fixtures/shop --select +fct_orders --format mermaid\n  ripple check --project fixtures/shop"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Statement lineage of a SQL script: the tables each statement reads and writes.
    #[command(after_help = LINEAGE_EXAMPLES)]
    Lineage(LineageArgs),
    /// The lineage graph of a project: datasets and the jobs between them.
    #[command(after_help = GRAPH_EXAMPLES)]
    Graph(GraphArgs),
    /// Validate a project: cycles, unknown refs, files that fail, tables written twice.
    #[command(after_help = CHECK_EXAMPLES)]
    Check(CheckArgs),
    /// What was read from the project's Airflow DAG files (parsed, never run).
    #[command(after_help = DAGS_EXAMPLES)]
    Dags(DagsArgs),
    /// Production runs (blackout windows for backfills) from the DAGs' schedules.
    #[command(after_help = SCHEDULE_EXAMPLES)]
    Schedule(ScheduleArgs),
    /// Which downstream datasets, and which of their partitions, a change affects.
    #[command(after_help = IMPACT_EXAMPLES)]
    Impact(ImpactArgs),
    /// The backfill plan for a change: batches in wavefront order, shadow writes, validations, swaps.
    #[command(after_help = PLAN_EXAMPLES)]
    Plan(PlanArgs),
    /// PR check: what changed in meaning between two revisions, and what downstream it affects.
    #[command(after_help = DIFF_EXAMPLES)]
    Diff(DiffArgs),
}

const DIFF_EXAMPLES: &str = "Examples:
  ripple diff --base origin/main
  ripple diff --base origin/main --head HEAD --project analytics --format github --fail-on breaking
  ripple diff --base-dir old/ --head-dir new/ --format json

Exit codes: 0 no change matched --fail-on, 1 some did, 2 bad input (unknown revision, unreadable folder).";

#[derive(clap::Args)]
struct DiffArgs {
    /// The revision to compare against (branch, tag, commit), read from git without touching the checkout.
    #[arg(
        long,
        value_name = "REV",
        required_unless_present = "base_dir",
        conflicts_with_all = ["base_dir", "head_dir"]
    )]
    base: Option<String>,
    /// The revision to compare (default: the project folder as it is on disk, uncommitted edits included).
    #[arg(long, value_name = "REV", conflicts_with = "head_dir")]
    head: Option<String>,
    /// The project folder inside the repository.
    #[arg(long, short, default_value = ".", value_name = "DIR")]
    project: PathBuf,
    /// Compare this folder (the old version) instead of a git revision.
    #[arg(long, value_name = "DIR", requires = "head_dir")]
    base_dir: Option<PathBuf>,
    /// The new version's folder, with --base-dir.
    #[arg(long, value_name = "DIR")]
    head_dir: Option<PathBuf>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = DiffFormat::Markdown)]
    format: DiffFormat,
    /// Exit with 1 when a change of this kind is found.
    #[arg(long, value_enum, default_value_t = FailOnArg::Breaking)]
    fail_on: FailOnArg,
    /// Write to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum DiffFormat {
    /// A pull-request comment: summary, table, Mermaid graph, details.
    Markdown,
    /// The JSON document other tools read.
    Json,
    /// GitHub Actions workflow annotations.
    Github,
    /// Plain text.
    Text,
}

#[derive(Clone, Copy, ValueEnum)]
enum FailOnArg {
    /// Breaking changes, removed models, and what could not be compared.
    Breaking,
    /// Any change that is not formatting only.
    Any,
    /// Never fail.
    None,
}

const DAGS_EXAMPLES: &str = "Examples:
  ripple dags --project fixtures/shop
  ripple dags --project . --format json";

#[derive(clap::Args)]
struct DagsArgs {
    #[command(flatten)]
    project: ProjectArgs,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = CheckFormat::Text)]
    format: CheckFormat,
}

const SCHEDULE_EXAMPLES: &str = "Examples:
  ripple schedule --from 2026-01-10 --to 2026-01-11 --project fixtures/shop
  ripple schedule --from 2026-01-10T00 --to 2026-01-10T06 --format json";

#[derive(clap::Args)]
struct ScheduleArgs {
    /// Horizon start (2026-01-10, or 2026-01-10T05), UTC.
    #[arg(long, value_name = "DATE")]
    from: String,
    /// Horizon end, inclusive (a day or an hour).
    #[arg(long, value_name = "DATE")]
    to: String,
    #[command(flatten)]
    project: ProjectArgs,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = CheckFormat::Text)]
    format: CheckFormat,
}

const PLAN_EXAMPLES: &str = "Examples:
  ripple plan raw.orders --from 2026-01-10 --to 2026-01-12 --as-of 2026-02-01 --project fixtures/worked_example/declared --format markdown
  ripple plan landing.orders --from 2026-01-10 --to 2026-01-11 --project fixtures/shop --format json --output plan.json";

#[derive(clap::Args)]
struct PlanArgs {
    #[command(flatten)]
    change: ChangeArgs,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = PlanFormat::Markdown)]
    format: PlanFormat,
    /// Plan even when SQL or templates of planned jobs failed to read.
    #[arg(long)]
    allow_partial: bool,
    /// The executor whose commands `shell` and `commands` use (default: whatever runs each job).
    #[arg(long, value_enum)]
    executor: Option<ExecutorArg>,
    /// Schedule the tasks from this time (UTC, 2026-02-01T20 or 2026-02-01): windows, production runs and caps respected.
    #[arg(long, value_name = "DATETIME")]
    start: Option<String>,
    /// Fail when the scheduled plan would end after this time (UTC).
    #[arg(long, value_name = "DATETIME", requires = "start")]
    deadline: Option<String>,
    /// Write to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// What changed, as `impact` and `plan` take it.
#[derive(clap::Args)]
struct ChangeArgs {
    /// The changed datasets (name, relation or node id), or selectors.
    #[arg(required = true, value_name = "TABLE")]
    tables: Vec<String>,
    /// First wrong partition, inclusive (2026-01-10, or 2026-01-10T05 for an hour).
    #[arg(long, value_name = "DATE")]
    from: String,
    /// Last wrong partition, inclusive.
    #[arg(long, value_name = "DATE")]
    to: String,
    /// The exclusive upper bound of "all history" (default: today, UTC).
    #[arg(long, value_name = "DATE")]
    as_of: Option<String>,
    #[command(flatten)]
    project: ProjectArgs,
}

impl ChangeArgs {
    fn request(&self) -> anyhow::Result<ImpactRequest> {
        let key =
            |s: &str, flag: &str| TimeKey::parse(s).map_err(|e| anyhow::anyhow!("{flag}: {e}"));
        Ok(ImpactRequest {
            changed: self.tables.clone(),
            from: key(&self.from, "--from")?,
            to: key(&self.to, "--to")?,
            as_of: match &self.as_of {
                Some(d) => key(d, "--as-of")?.start,
                None => ripple::time::today(),
            },
        })
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum PlanFormat {
    /// A summary for people.
    Text,
    /// The plan document other executors read (schema: docs/plan.schema.json).
    Json,
    /// Markdown for review.
    Markdown,
    /// Graphviz DOT: datasets as clusters, batches as nodes.
    Dot,
    /// A Mermaid flowchart.
    Mermaid,
    /// A `set -euo pipefail` script that stops at the first failed validation.
    Shell,
    /// Every task's command, in order.
    Commands,
    /// One Airflow DAG file running the tasks, validations and swaps.
    AirflowDag,
}

#[derive(Clone, Copy, ValueEnum)]
enum ExecutorArg {
    /// `airflow dags backfill` (Airflow 2).
    Airflow2,
    /// `airflow backfill create` (Airflow 3).
    Airflow3,
    /// `dbt run`.
    Dbt,
    /// The jobs' own SQL, redirected to shadows.
    Sql,
}

const IMPACT_EXAMPLES: &str = "Examples:
  ripple impact raw.orders --from 2026-01-10 --to 2026-01-12 --as-of 2026-02-01 --project fixtures/worked_example/declared
  ripple impact stg_orders --from 2026-01-10 --to 2026-01-10 --project fixtures/shop --format markdown
  ripple impact raw.events --from 2026-01-10T05 --to 2026-01-10T07 --explain --format json";

#[derive(clap::Args)]
struct ImpactArgs {
    #[command(flatten)]
    change: ChangeArgs,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = ImpactFormat::Text)]
    format: ImpactFormat,
    /// Show, per dataset, the edges and mappings that produced each interval, with their evidence.
    #[arg(long)]
    explain: bool,
    /// Write to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum ImpactFormat {
    /// A table for people.
    Text,
    /// The impact set as JSON.
    Json,
    /// Markdown for a ticket or PR.
    Markdown,
    /// The affected subgraph in Graphviz DOT.
    Dot,
    /// The affected subgraph as a Mermaid flowchart.
    Mermaid,
}

const GRAPH_EXAMPLES: &str = "Examples:
  ripple graph --project fixtures/shop
  ripple graph --project fixtures/shop --select +fct_orders --format mermaid
  ripple graph --project fixtures/shop --select 'tag:finance,path:models/marts' --format dot --output shop.dot";

const CHECK_EXAMPLES: &str = "Examples:
  ripple check --project fixtures/shop
  ripple check --project . --format json";

/// Where the project is and how to read it.
#[derive(clap::Args)]
struct ProjectArgs {
    /// The project folder (dbt project, SQL folders, ripple.yml).
    #[arg(long, short, default_value = ".", value_name = "DIR")]
    project: PathBuf,
    /// A dbt manifest.json to read as well (never read unless named here or in ripple.yml).
    #[arg(long, value_name = "FILE")]
    manifest: Option<PathBuf>,
}

#[derive(clap::Args)]
struct GraphArgs {
    #[command(flatten)]
    project: ProjectArgs,
    /// dbt-style selector: name, name+, +name, 2+name, name+1, @name, tag:x, path:dir; space = union, comma = intersection.
    #[arg(long, short)]
    select: Option<String>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = GraphFormat::Json)]
    format: GraphFormat,
    /// Write to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum GraphFormat {
    /// Nodes and edges as JSON.
    Json,
    /// Graphviz DOT.
    Dot,
    /// A Mermaid flowchart.
    Mermaid,
}

#[derive(clap::Args)]
struct CheckArgs {
    #[command(flatten)]
    project: ProjectArgs,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = CheckFormat::Text)]
    format: CheckFormat,
}

#[derive(Clone, Copy, ValueEnum)]
enum CheckFormat {
    /// One finding per line.
    Text,
    /// Findings as JSON.
    Json,
}

const LINEAGE_EXAMPLES: &str = "Examples:
  ripple lineage fixtures/sql/warehouse_load.sql --dialect postgres
  ripple lineage fixtures/sql/merge_upsert.sql --dialect snowflake --format json
  cat job.sql | ripple lineage - --dialect bigquery --strict
  ripple lineage fixtures/sql/merge_upsert.sql --dialect snowflake --columns";

#[derive(clap::Args)]
struct LineageArgs {
    /// The SQL script to read; `-` or nothing reads standard input.
    #[arg(value_name = "FILE|-")]
    file: Option<PathBuf>,
    /// SQL dialect of the script (generic, postgres, snowflake, bigquery, tsql, ...; see docs/dialects.md).
    #[arg(long, short, default_value = "generic", value_parser = parse_dialect)]
    dialect: SqlDialect,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = LineageFormat::Text)]
    format: LineageFormat,
    /// Exit with code 2 when any statement fails to parse (the lineage is still printed).
    #[arg(long)]
    strict: bool,
    /// Also show column lineage: each output column's upstream columns, and
    /// the columns that decide which rows come out.
    #[arg(long)]
    columns: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum LineageFormat {
    /// A table for people.
    Text,
    /// The JSON document other tools read.
    Json,
}

fn parse_dialect(s: &str) -> Result<SqlDialect, String> {
    s.parse().map_err(|e: ripple::Error| e.to_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Lineage(args) => lineage(args),
        Command::Graph(args) => graph(args),
        Command::Check(args) => check(args),
        Command::Impact(args) => impact(args),
        Command::Plan(args) => plan(args),
        Command::Dags(args) => dags(args),
        Command::Schedule(args) => schedule(args),
        Command::Diff(args) => diff(args),
    }
}

fn diff(args: DiffArgs) -> anyhow::Result<ExitCode> {
    use ripple::diff::FailOn;
    use ripple::ingest::revision;
    // Checked-out revisions live as long as the comparison.
    let mut copies = Vec::new();
    let (base_root, head_root, prefix) = match (&args.base_dir, &args.base) {
        (Some(base), _) => {
            let head = args.head_dir.clone().expect("clap requires --head-dir");
            (base.clone(), head, String::new())
        }
        (None, Some(rev)) => {
            let location = revision::locate(&args.project)?;
            let base = revision::check_out(&args.project, rev)?;
            let base_root = base.root.clone();
            copies.push(base);
            let head_root = match &args.head {
                Some(rev) => {
                    let head = revision::check_out(&args.project, rev)?;
                    let root = head.root.clone();
                    copies.push(head);
                    root
                }
                None => args.project.clone(),
            };
            (base_root, head_root, location.prefix)
        }
        (None, None) => anyhow::bail!("give --base REV, or --base-dir and --head-dir"),
    };
    let load = |root: &std::path::Path, side: String| -> anyhow::Result<LineageGraph> {
        let project = load_project(root, &LoadOptions::default())
            .map_err(|e| anyhow::anyhow!("{side}: {e}"))?;
        Ok(LineageGraph::build(project))
    };
    let base_side = match &args.base {
        Some(rev) => format!("base (`{rev}`)"),
        None => format!("base ({})", base_root.display()),
    };
    let head_side = match &args.head {
        Some(rev) => format!("head (`{rev}`)"),
        None => format!("head ({})", head_root.display()),
    };
    let (base, head) = rayon::join(
        || load(&base_root, base_side),
        || load(&head_root, head_side),
    );
    let mut report = ripple::diff::diff(&base?, &head?);
    drop(copies);
    for c in &mut report.changes {
        c.file = format!("{prefix}{}", c.file);
    }
    let fail_on = match args.fail_on {
        FailOnArg::Breaking => FailOn::Breaking,
        FailOnArg::Any => FailOn::Any,
        FailOnArg::None => FailOn::None,
    };
    let rendered = match args.format {
        DiffFormat::Markdown => emit::diff::markdown(&report),
        DiffFormat::Json => emit::diff::json(&report),
        DiffFormat::Github => emit::diff::github(&report, fail_on),
        DiffFormat::Text => emit::diff::text(&report),
    };
    write_output(args.output.as_deref(), &rendered)?;
    let fails = report.changes.iter().any(|c| fail_on.fails(c.kind));
    Ok(if fails {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn dags(args: DagsArgs) -> anyhow::Result<ExitCode> {
    let project = load_project(&args.project.project, &LoadOptions::default())?;
    let warnings: Vec<_> = project
        .diagnostics
        .iter()
        .filter(|d| d.code.starts_with("airflow") || d.code.contains("task"))
        .cloned()
        .collect();
    let rendered = match args.format {
        CheckFormat::Text => emit::dags::text(&project.dags, &warnings),
        CheckFormat::Json => emit::dags::json(&project.dags, &warnings),
    };
    write_stdout(&rendered)?;
    Ok(ExitCode::SUCCESS)
}

fn schedule(args: ScheduleArgs) -> anyhow::Result<ExitCode> {
    let from = TimeKey::parse(&args.from).map_err(|e| anyhow::anyhow!("--from: {e}"))?;
    let to = TimeKey::parse(&args.to).map_err(|e| anyhow::anyhow!("--to: {e}"))?;
    if from.start > to.start {
        anyhow::bail!("--from {} is after --to {}", args.from, args.to);
    }
    let project = load_project(&args.project.project, &LoadOptions::default())?;
    let result =
        ripple::schedule::production_schedule(&project.dags, &project.config, from.start, to.end());
    let rendered = match args.format {
        CheckFormat::Text => emit::schedule::text(&result),
        CheckFormat::Json => emit::schedule::json(&result),
    };
    write_stdout(&rendered)?;
    Ok(ExitCode::SUCCESS)
}

fn impact(args: ImpactArgs) -> anyhow::Result<ExitCode> {
    let request = args.change.request()?;
    let g = load_graph(&args.change.project)?;
    let facts = ripple::impact::TimeFacts::build(&g)?;
    let (result, model) = ripple::impact::impact(&g, &facts, &request, args.explain)?;
    let rendered = match args.format {
        ImpactFormat::Text => emit::impact::text(&result),
        ImpactFormat::Json => emit::impact::json(&result),
        ImpactFormat::Markdown => emit::impact::markdown(&result),
        ImpactFormat::Dot => emit::impact::dot(&g, &model, &result),
        ImpactFormat::Mermaid => emit::impact::mermaid(&g, &model, &result),
    };
    write_output(args.output.as_deref(), &rendered)?;
    Ok(ExitCode::SUCCESS)
}

fn plan(args: PlanArgs) -> anyhow::Result<ExitCode> {
    let request = args.change.request()?;
    let minute = |s: &str, flag: &str| -> anyhow::Result<i64> {
        let (date, minutes) = match s.split_once(':') {
            Some((head, tail)) if head.contains('T') => (
                head,
                tail.parse::<i64>()
                    .map_err(|_| anyhow::anyhow!("{flag}: `{s}` is not a time"))?,
            ),
            _ => (s, 0),
        };
        Ok(TimeKey::parse(date)
            .map_err(|e| anyhow::anyhow!("{flag}: {e}"))?
            .start
            * 60
            + minutes)
    };
    let start = args
        .start
        .as_deref()
        .map(|s| minute(s, "--start"))
        .transpose()?;
    let deadline = args
        .deadline
        .as_deref()
        .map(|s| minute(s, "--deadline"))
        .transpose()?;
    let bar = progress::Bar::new();
    let project = load_project(
        &args.change.project.project,
        &LoadOptions {
            manifest: args.change.project.manifest.clone(),
            progress: &bar,
        },
    )?;
    let dags = project.dags.clone();
    let g = LineageGraph::build(project);
    let facts = ripple::impact::TimeFacts::build(&g)?;
    let (result, model) = ripple::impact::impact(&g, &facts, &request, false)?;
    let tasks = ripple::plan::tasks(&g, &model, &result)?;
    if !args.allow_partial {
        // A job whose SQL or template failed to read would be run blind.
        let files: BTreeSet<&str> = tasks
            .tasks
            .iter()
            .filter_map(|t| g.writers.get(&t.dataset))
            .flatten()
            .filter_map(|j| g.jobs.get(j))
            .map(|j| j.file.as_str())
            .collect();
        let broken: Vec<String> = g
            .diagnostics
            .iter()
            .filter(|d| d.severity == ripple::project::Severity::Error)
            .filter(|d| d.file.as_deref().is_some_and(|f| files.contains(f)))
            .map(ToString::to_string)
            .collect();
        if let Some(first) = broken.first() {
            anyhow::bail!(
                "the plan would run {} job{} that failed to read ({first}); fix them or pass --allow-partial",
                broken.len(),
                if broken.len() == 1 { "" } else { "s" }
            );
        }
    }
    let mut doc = ripple::plan::document(&g, &model, &result, tasks);
    if let Some(start) = start {
        ripple::plan::schedule::apply(&mut doc, &g, &dags, start, deadline)?;
    }
    let executor = args.executor.map(|e| match e {
        ExecutorArg::Airflow2 => emit::plan::Executor::Airflow2,
        ExecutorArg::Airflow3 => emit::plan::Executor::Airflow3,
        ExecutorArg::Dbt => emit::plan::Executor::Dbt,
        ExecutorArg::Sql => emit::plan::Executor::Sql,
    });
    let rendered = match args.format {
        PlanFormat::Text => emit::plan::text(&doc),
        PlanFormat::Json => emit::plan::json(&doc),
        PlanFormat::Markdown => emit::plan::markdown(&doc),
        PlanFormat::Dot => emit::plan::dot(&doc),
        PlanFormat::Mermaid => emit::plan::mermaid(&doc),
        PlanFormat::Shell => emit::plan::shell(&doc, executor),
        PlanFormat::Commands => emit::plan::commands(&doc, executor),
        PlanFormat::AirflowDag => emit::plan::airflow_dag(
            &doc,
            executor,
            g.config.backfill.max_concurrency.unwrap_or(4),
        ),
    };
    write_output(args.output.as_deref(), &rendered)?;
    Ok(ExitCode::SUCCESS)
}

/// Loads and builds the graph, with a progress bar on a terminal.
fn load_graph(args: &ProjectArgs) -> anyhow::Result<LineageGraph> {
    let bar = progress::Bar::new();
    let options = LoadOptions {
        manifest: args.manifest.clone(),
        progress: &bar,
    };
    let project = load_project(&args.project, &options)?;
    Ok(LineageGraph::build(project))
}

fn graph(args: GraphArgs) -> anyhow::Result<ExitCode> {
    let g = load_graph(&args.project)?;
    let nodes: BTreeSet<_> = match &args.select {
        Some(sel) => Selector::parse(sel)?.select(&g)?,
        None => g.graph.node_indices().collect(),
    };
    let rendered = match args.format {
        GraphFormat::Json => emit::graph::json(&g, &nodes),
        GraphFormat::Dot => emit::graph::dot(&g, &nodes),
        GraphFormat::Mermaid => emit::graph::mermaid(&g, &nodes),
    };
    write_output(args.output.as_deref(), &rendered)?;
    let (errors, _) = emit::check::counts(&g.diagnostics);
    if errors > 0 {
        eprintln!(
            "warning: {errors} problem{} while reading the project; the graph may be incomplete (see `ripple check`)",
            if errors == 1 { "" } else { "s" }
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let g = load_graph(&args.project)?;
    let findings = g.check();
    let rendered = match args.format {
        CheckFormat::Text => emit::check::text(&findings),
        CheckFormat::Json => emit::check::json(&findings),
    };
    write_stdout(&rendered)?;
    let (errors, _) = emit::check::counts(&findings);
    Ok(if errors > 0 {
        ExitCode::from(EXIT_BAD_INPUT)
    } else {
        ExitCode::SUCCESS
    })
}

/// Writes `text` to `path`, or to standard output when there is none.
fn write_output(path: Option<&std::path::Path>, text: &str) -> anyhow::Result<()> {
    match path {
        Some(p) => std::fs::write(p, text)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", p.display())),
        None => write_stdout(text),
    }
}

fn lineage(args: LineageArgs) -> anyhow::Result<ExitCode> {
    let path = args.file.unwrap_or_else(|| PathBuf::from("-"));
    let sql = input::read_text(&path)?;
    let lineage = if args.columns {
        ripple::sql::script_lineage_with_columns(&sql, args.dialect, &Default::default())
    } else {
        script_lineage(&sql, args.dialect)
    };
    let label = if path == std::path::Path::new("-") {
        STDIN_LABEL.to_string()
    } else {
        path.display().to_string()
    };
    let rendered = match args.format {
        LineageFormat::Json => emit::lineage::json(&lineage),
        LineageFormat::Text => emit::lineage::text(&lineage, &label),
    };
    write_stdout(&rendered)?;
    if args.strict && !lineage.errors.is_empty() {
        for e in &lineage.errors {
            eprintln!(
                "error: {label}:{}:{}: statement {} does not parse: {}",
                e.line, e.column, e.statement, e.message
            );
        }
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes to stdout; a closed pipe (`ripple ... | head`) is not an error.
fn write_stdout(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}
