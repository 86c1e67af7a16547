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
    let mut findings = g.check();
    // What impact and plan would refuse in ripple.yml's time facts (a key
    // naming no dataset, a start that is no date), check reports too.
    if let Err(e) = ripple::impact::TimeFacts::build(g) {
        findings.push(ripple::project::Diagnostic::error(
            "time-facts",
            None,
            0,
            0,
            e.to_string(),
        ));
        findings.sort();
    }
    let coverage = emit::check::Coverage::of(g.jobs.values(), &findings);
    let rendered = match args.format {
        ReportFormat::Text => {
            ripple::text::inert(&emit::check::text(&findings, coverage)).into_owned()
        }
        ReportFormat::Json => emit::check::json(&findings, coverage),
    };
    write_stdout(&rendered)?;
    let (errors, _) = emit::check::counts(&findings);
    Ok(if errors > 0 {
        ExitCode::from(EXIT_BAD_INPUT)
    } else {
        ExitCode::SUCCESS
    })
}
