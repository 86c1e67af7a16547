//! `ripple plan`: the backfill plan for a change.

use std::path::PathBuf;
use std::process::ExitCode;

use ripple::emit::{self, plan::Format};
use ripple::plan::executors::Executor;
use ripple::plan::{Check, PlanOptions, schedule::DEFAULT_MAX_CONCURRENCY};
use ripple::schedule::parse_minute;

use super::{ChangeArgs, write_output, write_output_with};

pub const EXAMPLES: &str = "Examples:
  ripple plan raw.orders --from 2026-01-10 --to 2026-01-12 --as-of 2026-02-01 --project fixtures/worked_example/declared --format markdown
  ripple plan landing.orders --from 2026-01-10 --to 2026-01-11 --project fixtures/shop --format json --output plan.json";

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    change: ChangeArgs,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = Format::Markdown)]
    format: Format,
    /// Plan even when SQL or templates of planned jobs failed to read.
    #[arg(long)]
    allow_partial: bool,
    /// The executor whose commands `shell` and `commands` use (default: whatever runs each job).
    #[arg(long, value_enum)]
    executor: Option<Executor>,
    /// Schedule the tasks from this time (UTC, 2026-02-01T20 or 2026-02-01): windows, production runs and caps respected.
    #[arg(long, value_name = "DATETIME")]
    start: Option<String>,
    /// Fail when the scheduled plan would end after this time (UTC).
    #[arg(long, value_name = "DATETIME", requires = "start")]
    deadline: Option<String>,
    /// Keep the shadow tables after a successful swap (default: dropped).
    #[arg(long)]
    keep_shadows: bool,
    /// Turn a built-in validation off for every dataset (repeatable).
    #[arg(long, value_enum, value_name = "CHECK")]
    skip_check: Vec<Check>,
    /// The row-count check's tolerance, a fraction of production's count (default 0.1).
    #[arg(long, value_name = "FRACTION", value_parser = parse_tolerance)]
    row_count_tolerance: Option<f64>,
    /// What production's tables are: catalog lines (`ripple tables` prints the query) or DDL files (repeatable; see docs/plan.md).
    #[arg(long = "tables", value_name = "FILE")]
    table_facts: Vec<PathBuf>,
    /// Write to this file instead of standard output (`-` is standard output).
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
}

fn parse_tolerance(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if (0.0..1.0).contains(&x) => Ok(x),
        _ => Err(format!(
            "`{s}` is not a fraction from 0 to below 1 (e.g. 0.25): the share of production's rows a partition may lose; to turn the check off, use --skip-check row-count"
        )),
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let request = args.change.request()?;
    let minute = |s: &Option<String>, flag: &str| {
        s.as_deref()
            .map(|s| parse_minute(s).map_err(|e| anyhow::anyhow!("{flag}: {e}")))
            .transpose()
    };
    let g = args.change.project.graph()?;
    let tables = ripple::ingest::load_tables(
        &g.root,
        &g.config.tables,
        &args.table_facts,
        g.config.allow_outside_project,
        g.config.dialect,
    )?;
    let options = PlanOptions {
        tables,
        keep_shadows: args.keep_shadows,
        skip_checks: args.skip_check,
        row_count_tolerance: args.row_count_tolerance,
        allow_partial: args.allow_partial,
        start: minute(&args.start, "--start")?,
        deadline: minute(&args.deadline, "--deadline")?,
    };
    let (doc, impact, model) = ripple::timings::phase("plan", || {
        // The HTML report shows every reason on click: it always explains.
        ripple::plan::for_change_with_impact(g, &request, &options, args.format == Format::Html)
    })?;
    // Whatever the format: on standard error too, where a script's or a
    // file's reader would not look.
    if let Some(w) = ripple::plan::unread_warning(g) {
        eprintln!("warning: {}", ripple::text::inert(&w));
    }
    let planned = emit::plan::Planned {
        graph: g,
        model: &model,
        impact: &impact,
    };
    let max_concurrency = g
        .config
        .backfill
        .max_concurrency
        .unwrap_or(DEFAULT_MAX_CONCURRENCY);
    if args.format == Format::Json {
        // Written as it is made: a large plan's text is never held whole.
        ripple::timings::phase("output", || {
            write_output_with(args.output.as_deref(), |w| emit::plan::write_json(&doc, w))
        })?;
    } else {
        let text = ripple::timings::phase("output", || {
            emit::plan::render(&doc, &planned, args.format, args.executor, max_concurrency)
        })?;
        write_output(args.output.as_deref(), &text)?;
        std::mem::forget(text);
    }
    // Like the graph, the plan lives until the process exits: freeing a
    // 20,000-task plan piece by piece took a fifth of `ripple plan`.
    std::mem::forget((doc, impact, model));
    Ok(ExitCode::SUCCESS)
}
