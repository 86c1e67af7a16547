//! `ripple graph`: the lineage graph of a project, or a selected part of it.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;

use ripple::emit::{self, graph::Format, openlineage};
use ripple::graph::Selector;

use super::{ProjectArgs, write_output, write_output_with};

pub const EXAMPLES: &str = "Examples:
  ripple graph --project fixtures/shop
  ripple graph --project fixtures/shop --select +fct_orders --format mermaid
  ripple graph --project fixtures/shop --select 'tag:finance,path:models/marts' --format dot --output shop.dot
  ripple graph --project fixtures/shop --format openlineage --output lineage.ndjson
  ripple graph --project fixtures/shop --format openlineage --post http://localhost:5000/api/v1/lineage";

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
    /// Write to this file instead of standard output (`-` is standard output).
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// With `--format openlineage`: static job events, or START/COMPLETE run events.
    #[arg(long, value_enum, default_value_t = openlineage::Mode::Static)]
    openlineage_mode: openlineage::Mode,
    /// With `--format openlineage`: the events' time (a date or an hour, UTC; default: today).
    #[arg(long, value_name = "DATE")]
    event_time: Option<String>,
    /// With `--format openlineage`: POST each event to this http:// endpoint (e.g. Marquez's
    /// http://localhost:5000/api/v1/lineage), retrying failures; nothing goes to standard output
    /// unless `--output` is given too.
    #[arg(long, value_name = "URL")]
    post: Option<String>,
    /// With `--post`: tries per event after the first.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = parse_retries, requires = "post")]
    post_retries: u32,
    /// With `--post`: seconds the whole post may take, every event and retry included.
    #[arg(long, value_name = "SECONDS", default_value_t = ripple::post::DEFAULT_DEADLINE_SECS, value_parser = parse_deadline, requires = "post")]
    post_timeout: u64,
}

/// `--post-retries`: a whole number a person would give, said so when not.
fn parse_retries(s: &str) -> Result<u32, String> {
    super::whole_number(s, 0, 100, "tries per event after the first").map(|n| n as u32)
}

/// `--post-timeout`: whole seconds, up to a week.
fn parse_deadline(s: &str) -> Result<u64, String> {
    super::whole_number(
        s,
        1,
        ripple::post::MAX_DEADLINE_SECS,
        "seconds the whole post may take",
    )
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.post.is_some() && args.format != Format::Openlineage {
        anyhow::bail!("--post sends OpenLineage events: add `--format openlineage`");
    }
    // A bad URL is found before the project is read.
    let endpoint = args
        .post
        .as_deref()
        .map(ripple::post::Endpoint::parse)
        .transpose()?;
    // Only the whole graph as JSON can be answered from the lineage alone.
    let whole_json = args.format == Format::Json && endpoint.is_none() && args.select.is_none();
    let project = args.project.open(whole_json)?;
    // The whole graph as JSON depends on the graph alone: a run over the
    // same lineage (an edit to a model's SQL that changed none of what was
    // read from it) writes the document kept by the last one, and reads
    // none of the project's models.
    let keep = project.lineage().filter(|_| whole_json).cloned();
    if let Some(lineage) = &keep {
        if let Some(kept) = emit::graph::kept_json(project.cache(), lineage.key) {
            ripple::timings::phase("output", || {
                write_output_with(args.output.as_deref(), |w| w.write_all(kept.document()))
            })?;
            warn_of_errors(kept.errors);
            // Left to the OS at exit, as a built graph is.
            std::mem::forget(project);
            return Ok(ExitCode::SUCCESS);
        }
        // A run whose edited models changed only what they read: the kept
        // document of the last run, its edges patched.
        let started = std::time::Instant::now();
        let patched = match emit::graph::patched_json(project.cache(), lineage) {
            emit::graph::Patch::Unkept => None,
            emit::graph::Patch::Refused => {
                ripple::timings::record("graph patch (not possible)", started.elapsed());
                None
            }
            emit::graph::Patch::Done(patched) => {
                ripple::timings::record("graph (kept, patched)", started.elapsed());
                Some(patched)
            }
        };
        if let Some(patched) = patched {
            ripple::timings::phase("output", || {
                write_output_with(args.output.as_deref(), |w| {
                    patched.write(project.cache(), lineage, w)
                })
            })?;
            warn_of_errors(patched.errors());
            std::mem::forget(project);
            return Ok(ExitCode::SUCCESS);
        }
    }
    let g = super::ProjectArgs::build(project.load())?;
    let nodes: BTreeSet<_> = match &args.select {
        Some(sel) => Selector::parse(sel)?.select(g)?,
        None => g.graph.node_indices().collect(),
    };
    // As dbt says it: an empty answer from a typo looks like an empty project.
    if let (Some(sel), true) = (&args.select, nodes.is_empty()) {
        eprintln!(
            "warning: --select {} matches no dataset of the project",
            ripple::text::one_line(sel)
        );
    }
    let options = openlineage::Options {
        mode: args.openlineage_mode,
        event_time: match &args.event_time {
            Some(t) => super::time_key(t, "--event-time")?.start,
            None => ripple::time::today(),
        },
    };
    if args.format == Format::Json && endpoint.is_none() {
        // Written as it is made, on every core: the document of a large
        // project is megabytes.
        ripple::timings::phase("output", || {
            write_output_with(args.output.as_deref(), |w| match &keep {
                Some(lineage) => emit::graph::write_json_kept(g, lineage, w),
                None => emit::graph::write_json(g, &nodes, w),
            })
        })?;
        warn_if_incomplete(g);
        return Ok(ExitCode::SUCCESS);
    }
    let text = ripple::timings::phase("output", || match args.format {
        Format::Openlineage => {
            let events = openlineage::events(g, &nodes, &options);
            if events.without_columns > 0 {
                eprintln!(
                    "warning: {} job{} exported without column facets: the export holds at most {} column fields (docs/limits.md)",
                    events.without_columns,
                    ripple::text::plural(events.without_columns),
                    openlineage::MAX_COLUMN_FIELDS
                );
            }
            events.text
        }
        _ => emit::graph::render(g, &nodes, args.format, &options),
    });
    match &endpoint {
        Some(endpoint) => {
            if args.output.is_some() {
                write_output(args.output.as_deref(), &text)?;
            }
            let retry = ripple::post::Retry {
                retries: args.post_retries,
                deadline: std::time::Duration::from_secs(args.post_timeout),
                ..Default::default()
            };
            let posted = ripple::timings::phase("post", || {
                ripple::post::post_events(endpoint, &text, retry)
            })?;
            eprintln!(
                "posted {} event{} to {}{}",
                posted.events,
                ripple::text::plural(posted.events),
                endpoint.url,
                match posted.retried {
                    0 => String::new(),
                    n => format!(" ({n} retried)"),
                }
            );
        }
        None => write_output(args.output.as_deref(), &text)?,
    }
    warn_if_incomplete(g);
    Ok(ExitCode::SUCCESS)
}

/// One line on standard error when reading the project went wrong.
fn warn_if_incomplete(g: &ripple::graph::LineageGraph) {
    warn_of_errors(emit::check::counts(&g.diagnostics).0);
}

/// [`warn_if_incomplete`] for a count of errors.
fn warn_of_errors(errors: usize) {
    if errors > 0 {
        eprintln!(
            "warning: {errors} problem{} while reading the project; the graph may be incomplete (see `ripple check`)",
            ripple::text::plural(errors)
        );
    }
}
