//! `ripple check`: cycles, unknown refs, files that fail, tables written twice.

use std::process::ExitCode;

use ripple::emit::{self, ReportFormat};

use super::{EXIT_BAD_INPUT, ProjectArgs, write_stdout};

pub const EXAMPLES: &str = "Examples:
  ripple check --project fixtures/shop
  ripple check --project . --format json";

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    project: ProjectArgs,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = ReportFormat::Text)]
    format: ReportFormat,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let g = args.project.graph()?;
    let findings = g.check();
    let rendered = match args.format {
        ReportFormat::Text => emit::check::text(&findings),
        ReportFormat::Json => emit::check::json(&findings),
    };
    write_stdout(&rendered)?;
    let (errors, _) = emit::check::counts(&findings);
    Ok(if errors > 0 {
        ExitCode::from(EXIT_BAD_INPUT)
    } else {
        ExitCode::SUCCESS
    })
}
