//! `ripple dags`: what was read from the project's Airflow DAG files.

use std::process::ExitCode;

use ripple::emit::{self, ReportFormat};
use ripple::ingest::{LoadOptions, load_project};

use super::{ProjectArgs, write_stdout};

pub const EXAMPLES: &str = "Examples:
  ripple dags --project fixtures/shop
  ripple dags --project . --format json";

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    project: ProjectArgs,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = ReportFormat::Text)]
    format: ReportFormat,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let project = load_project(&args.project.project, &LoadOptions::default())?;
    let warnings = project.dag_diagnostics();
    let rendered = match args.format {
        ReportFormat::Text => {
            ripple::text::inert(&emit::dags::text(&project.dags, &warnings)).into_owned()
        }
        ReportFormat::Json => emit::dags::json(&project.dags, &warnings),
    };
    write_stdout(&rendered)?;
    Ok(ExitCode::SUCCESS)
}
