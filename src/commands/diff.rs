//! `ripple diff`: what changed in meaning between two versions, and what
//! downstream it affects.

use std::path::PathBuf;
use std::process::ExitCode;

use ripple::diff::{FailOn, Sides, diff_sides};
use ripple::emit::{self, diff::Format};

use super::write_output;

pub const EXAMPLES: &str = "Examples:
  ripple diff --base origin/main
  ripple diff --base origin/main --head HEAD --project analytics --format github --fail-on breaking
  ripple diff --base-dir old/ --head-dir new/ --format json

Exit codes: 0 no change matched --fail-on, 1 some did, 2 bad input (unknown revision, unreadable folder).";

#[derive(clap::Args)]
pub struct Args {
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
    #[arg(long, short, value_enum, default_value_t = Format::Markdown)]
    format: Format,
    /// Exit with 1 when a change of this kind is found.
    #[arg(long, value_enum, default_value_t = FailOn::Breaking)]
    fail_on: FailOn,
    /// Write to this file instead of standard output (`-` is standard output).
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Accepted as every command accepts it: diff never uses the cache
    /// (scripts passing it to each command once failed here).
    #[arg(long)]
    no_cache: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let sides = match (args.base_dir, args.head_dir, args.base) {
        (Some(base), Some(head), _) => Sides::Folders { base, head },
        (None, _, Some(base)) => Sides::Revisions {
            project: args.project,
            base,
            head: args.head,
        },
        _ => anyhow::bail!("give --base REV, or --base-dir and --head-dir"),
    };
    let report = diff_sides(&sides)?;
    write_output(
        args.output.as_deref(),
        &emit::diff::render(&report, args.format, args.fail_on),
    )?;
    let fails = report.changes.iter().any(|c| args.fail_on.fails(c.kind));
    Ok(if fails {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
