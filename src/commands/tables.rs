//! `ripple tables`: the query that reads production's table facts from the
//! warehouse's catalog, for `tables:` in ripple.yml (docs/plan.md).

use std::path::PathBuf;
use std::process::ExitCode;

use super::{EXIT_BAD_INPUT, write_stdout};

pub const EXAMPLES: &str = "Examples:
  psql -X -qAt -c \"$(ripple tables --project .)\" > tables.jsonl
  duckdb -noheader -list warehouse.db -c \"$(ripple tables --dialect duckdb)\" > tables.jsonl";

#[derive(clap::Args)]
pub struct Args {
    /// The project folder: its ripple.yml gives the dialect.
    #[arg(long, short, default_value = ".", value_name = "DIR")]
    project: PathBuf,
    /// The engine (default: the project's dialect).
    #[arg(long, value_name = "DIALECT")]
    dialect: Option<ripple::sql::SqlDialect>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let dialect = match args.dialect {
        Some(d) => d,
        None => ripple::config::Config::load(&args.project)?.dialect,
    };
    match ripple::sql::tables::catalog_query(dialect) {
        Some(query) => {
            write_stdout(&format!("{query}\n"))?;
            Ok(ExitCode::SUCCESS)
        }
        // No dialect given and none in a ripple.yml: the likely slip is the
        // folder, not the engine.
        None if args.dialect.is_none()
            && dialect == ripple::sql::SqlDialect::Generic
            && !args.project.join("ripple.yml").is_file() =>
        {
            eprintln!(
                "error: {} holds no ripple.yml to say the engine; pass the project's folder (--project DIR) or the engine (--dialect postgres or duckdb)",
                ripple::text::one_line(&args.project.to_string_lossy())
            );
            Ok(ExitCode::from(EXIT_BAD_INPUT))
        }
        None => {
            eprintln!(
                "error: ripple reads no catalog of {dialect}; describe its tables with DDL files under `tables:` in ripple.yml (docs/plan.md)"
            );
            Ok(ExitCode::from(EXIT_BAD_INPUT))
        }
    }
}
