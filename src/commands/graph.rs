//! `ripple graph`: the lineage graph of a project, or a selected part of it.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;

use ripple::emit::{self, graph::Format, openlineage};
use ripple::graph::Selector;

use super::{ProjectArgs, write_output};

pub const EXAMPLES: &str = "Examples:
  ripple graph --project fixtures/shop
  ripple graph --project fixtures/shop --select +fct_orders --format mermaid
  ripple graph --project fixtures/shop --select 'tag:finance,path:models/marts' --format dot --output shop.dot
  ripple graph --project fixtures/shop --format openlineage --output lineage.ndjson";

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    project: ProjectArgs,
    /// dbt-style selector: name, name+, +name, 2+name, name+1, @name, tag:x, path:dir; space = union, comma = intersection.
    #[arg(long, short)]
    select: Option<String>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = Format::Json)]
    format: Format,
    /// Write to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// With `--format openlineage`: static job events, or START/COMPLETE run events.
    #[arg(long, value_enum, default_value_t = openlineage::Mode::Static)]
    openlineage_mode: openlineage::Mode,
    /// With `--format openlineage`: the events' time (a date or an hour, UTC; default: today).
    #[arg(long, value_name = "DATE")]
    event_time: Option<String>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let g = args.project.graph()?;
    let nodes: BTreeSet<_> = match &args.select {
        Some(sel) => Selector::parse(sel)?.select(g)?,
        None => g.graph.node_indices().collect(),
    };
    let options = openlineage::Options {
        mode: args.openlineage_mode,
        event_time: match &args.event_time {
            Some(t) => super::time_key(t, "--event-time")?.start,
            None => ripple::time::today(),
        },
    };
    let text = ripple::timings::phase("output", || {
        emit::graph::render(g, &nodes, args.format, &options)
    });
    write_output(args.output.as_deref(), &text)?;
    let (errors, _) = emit::check::counts(&g.diagnostics);
    if errors > 0 {
        eprintln!(
            "warning: {errors} problem{} while reading the project; the graph may be incomplete (see `ripple check`)",
            ripple::text::plural(errors)
        );
    }
    Ok(ExitCode::SUCCESS)
}
