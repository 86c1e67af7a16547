//! `ripple schedule`: production runs (blackout windows for backfills).

use std::process::ExitCode;

use ripple::emit::{self, ReportFormat};
use ripple::ingest::{LoadOptions, load_project};

use super::{ProjectArgs, time_key, write_stdout};

pub const EXAMPLES: &str = "Examples:
  ripple schedule --from 2026-01-10 --to 2026-01-11 --project fixtures/shop
  ripple schedule --from 2026-01-10T00 --to 2026-01-10T06 --format json";

#[derive(clap::Args)]
pub struct Args {
    /// Horizon start (2026-01-10, or 2026-01-10T05), UTC.
    #[arg(long, value_name = "DATE")]
    from: String,
    /// Horizon end, inclusive (a day or an hour).
    #[arg(long, value_name = "DATE")]
    to: String,
    #[command(flatten)]
    project: ProjectArgs,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = ReportFormat::Text)]
    format: ReportFormat,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let from = time_key(&args.from, "--from")?;
    let to = time_key(&args.to, "--to")?;
    if from.start > to.start {
        anyhow::bail!("--from {} is after --to {}", args.from, args.to);
    }
    let project = load_project(&args.project.project, &LoadOptions::default())?;
    let result =
        ripple::schedule::production_schedule(&project.dags, &project.config, from.start, to.end());
    let rendered = match args.format {
        ReportFormat::Text => ripple::text::inert(&emit::schedule::text(&result)).into_owned(),
        ReportFormat::Json => emit::schedule::json(&result),
    };
    write_stdout(&rendered)?;
    // A DAG file that could not be read has runs the schedule lacks, and
    // backfills planned around it would land on them.
    let errors: Vec<_> = project
        .dag_diagnostics()
        .into_iter()
        .filter(|d| d.severity == ripple::project::Severity::Error)
        .collect();
    for d in &errors {
        eprintln!("{}", ripple::text::inert(&d.to_string()));
    }
    if errors.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!(
            "error: {} DAG file problem{}: the schedule may lack the runs of what could not be read",
            errors.len(),
            ripple::text::plural(errors.len())
        );
        Ok(ExitCode::from(2))
    }
}
