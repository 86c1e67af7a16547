//! `ripple lineage`: what each statement of a script reads and writes.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ripple::emit::{self, ReportFormat};
use ripple::input::{self, STDIN_LABEL};
use ripple::sql::{SqlDialect, script_lineage, script_lineage_with_columns};

use super::{EXIT_BAD_INPUT, write_stdout};

pub const EXAMPLES: &str = "Examples:
  ripple lineage fixtures/sql/warehouse_load.sql --dialect postgres
  ripple lineage fixtures/sql/merge_upsert.sql --dialect snowflake --format json
  cat job.sql | ripple lineage - --dialect bigquery --strict
  ripple lineage fixtures/sql/merge_upsert.sql --dialect snowflake --columns
  ripple lineage job.sql --dialect postgres --schema warehouse_columns.json";

#[derive(clap::Args)]
pub struct Args {
    /// The SQL script to read; `-` or nothing reads standard input.
    #[arg(value_name = "FILE|-")]
    file: Option<PathBuf>,
    /// SQL dialect of the script (generic, postgres, snowflake, bigquery, tsql, ...; see docs/dialects.md).
    #[arg(long, short, default_value = "generic", value_parser = parse_dialect)]
    dialect: SqlDialect,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = ReportFormat::Text)]
    format: ReportFormat,
    /// Exit with code 2 when any statement fails to parse (the lineage is still printed).
    #[arg(long)]
    strict: bool,
    /// Also show column lineage: each output column's upstream columns, and
    /// the columns that decide which rows come out.
    #[arg(long)]
    columns: bool,
    /// Columns of the tables the script reads (JSON or YAML: `{"sales.orders": ["id", "amount"]}`),
    /// so that unqualified names in joins and `*` resolve; implies --columns.
    #[arg(long, value_name = "FILE")]
    schema: Option<PathBuf>,
}

fn parse_dialect(s: &str) -> Result<SqlDialect, String> {
    s.parse().map_err(|e: ripple::Error| e.to_string())
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let path = args.file.unwrap_or_else(|| PathBuf::from("-"));
    let sql = input::read_text(&path)?;
    let known = match &args.schema {
        Some(file) => ripple::ingest::read_schema(file, args.dialect)?,
        None => Default::default(),
    };
    let lineage = if args.columns || args.schema.is_some() {
        script_lineage_with_columns(&sql, args.dialect, &known)
    } else {
        script_lineage(&sql, args.dialect)
    };
    let label = if path == Path::new("-") {
        STDIN_LABEL.to_string()
    } else {
        path.display().to_string()
    };
    let rendered = match args.format {
        ReportFormat::Json => emit::lineage::json(&lineage),
        ReportFormat::Text => {
            ripple::text::inert(&emit::lineage::text(&lineage, &label)).into_owned()
        }
    };
    write_stdout(&rendered)?;
    if args.strict && !lineage.errors.is_empty() {
        for e in &lineage.errors {
            let line = format!(
                "error: {label}:{}:{}: statement {} does not parse: {}",
                e.line, e.column, e.statement, e.message
            );
            eprintln!("{}", ripple::text::inert(&line));
        }
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    }
    Ok(ExitCode::SUCCESS)
}
