//! The `ripple` command line: parse the arguments, dispatch to the
//! subcommand's `run` (one file each under `commands/`), turn errors into
//! exit code 2.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod commands;
mod progress;

use commands::EXIT_BAD_INPUT;

// The system allocator spent a fifth of every large run in malloc and free;
// mimalloc without transparent huge pages is faster and smaller at 10,000
// and 100,000 models (docs/performance.md, "Allocator"). Only the binary
// chooses: the library leaves the allocator to its users.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    /// Print each phase's wall time to standard error (also `RIPPLE_LOG=timings`).
    #[arg(long, global = true)]
    timings: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Statement lineage of a SQL script: the tables each statement reads and writes.
    #[command(after_help = commands::lineage::EXAMPLES)]
    Lineage(commands::lineage::Args),
    /// The lineage graph of a project: datasets and the jobs between them.
    #[command(after_help = commands::graph::EXAMPLES)]
    Graph(commands::graph::Args),
    /// Validate a project: cycles, unknown refs, files that fail, tables written twice.
    #[command(after_help = commands::check::EXAMPLES)]
    Check(commands::check::Args),
    /// What was read from the project's Airflow DAG files (parsed, never run).
    #[command(after_help = commands::dags::EXAMPLES)]
    Dags(commands::dags::Args),
    /// Production runs (blackout windows for backfills) from the DAGs' schedules.
    #[command(after_help = commands::schedule::EXAMPLES)]
    Schedule(commands::schedule::Args),
    /// Which downstream datasets, and which of their partitions, a change affects.
    #[command(after_help = commands::impact::EXAMPLES)]
    Impact(commands::impact::Args),
    /// The backfill plan for a change: batches in wavefront order, shadow writes, validations, swaps.
    #[command(after_help = commands::plan::EXAMPLES)]
    Plan(commands::plan::Args),
    /// The query that reads production's table facts from the catalog, for `tables:` in ripple.yml.
    #[command(after_help = commands::tables::EXAMPLES)]
    Tables(commands::tables::Args),
    /// PR check: what changed in meaning between two revisions, and what downstream it affects.
    #[command(after_help = commands::diff::EXAMPLES)]
    Diff(commands::diff::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let timings = cli.timings
        || std::env::var("RIPPLE_LOG").is_ok_and(|v| v.split(',').any(|p| p.trim() == "timings"));
    if timings {
        ripple::timings::enable();
    }
    let result = match cli.command {
        Command::Lineage(args) => commands::lineage::run(args),
        Command::Graph(args) => commands::graph::run(args),
        Command::Check(args) => commands::check::run(args),
        Command::Dags(args) => commands::dags::run(args),
        Command::Schedule(args) => commands::schedule::run(args),
        Command::Impact(args) => commands::impact::run(args),
        Command::Plan(args) => commands::plan::run(args),
        Command::Diff(args) => commands::diff::run(args),
        Command::Tables(args) => commands::tables::run(args),
    };
    // Also after a refusal: what was worked out on the way stays true.
    commands::save_caches();
    if timings {
        eprint!("{}", ripple::timings::report());
    }
    result.unwrap_or_else(|err| {
        // Names, and a server's answer, can hold escape sequences.
        // One line: a name holding a line break cannot forge another.
        let said = ripple::text::without_os_code(&format!("{err:#}"));
        eprintln!("error: {}", ripple::text::one_line(&said));
        ExitCode::from(EXIT_BAD_INPUT)
    })
}
