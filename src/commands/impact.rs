//! `ripple impact`: which datasets, and which of their partitions, a change affects.

use std::path::PathBuf;
use std::process::ExitCode;

use ripple::emit::{self, impact::Format};

use ripple::timings::phase;

use super::{ChangeArgs, write_output};

pub const EXAMPLES: &str = "Examples:
  ripple impact raw.orders --from 2026-01-10 --to 2026-01-12 --as-of 2026-02-01 --project fixtures/worked_example/declared
  ripple impact stg_orders --from 2026-01-10 --to 2026-01-10 --project fixtures/shop --format markdown
  ripple impact raw.events --from 2026-01-10T05 --to 2026-01-10T07 --explain --format json";

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    change: ChangeArgs,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Show, per dataset, the edges and mappings that produced each interval, with their evidence.
    #[arg(long)]
    explain: bool,
    /// Write to this file instead of standard output (`-` is standard output).
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let request = args.change.request()?;
    let g = args.change.project.graph_with_partitions()?;
    let facts = phase("time facts", || {
        ripple::impact::TimeFacts::for_request(g, &request)
    })?;
    let (result, model) = phase("impact", || {
        // The HTML report shows every reason on click: it always explains.
        let explain = args.explain || args.format == Format::Html;
        ripple::impact::impact(g, &facts, &request, explain)
    })?;
    let text = phase("output", || {
        emit::impact::render(g, &model, &result, args.format)
    });
    write_output(args.output.as_deref(), &text)?;
    if let Some(w) = ripple::plan::unread_warning(g) {
        eprintln!("warning: {}", ripple::text::inert(&w));
    }
    if let Some(w) = ripple::plan::hidden_warning(g) {
        eprintln!("warning: {}", ripple::text::inert(&w));
    }
    // Left to the OS at exit, like the graph: freeing it costs more.
    std::mem::forget((facts, result, model, text));
    Ok(ExitCode::SUCCESS)
}
