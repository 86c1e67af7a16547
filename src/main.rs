//! The `ripple` command line: arguments in, one library call, output out.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use ripple::emit;
use ripple::input::{self, STDIN_LABEL};
use ripple::sql::{SqlDialect, script_lineage};

/// Exit code for bad input or usage (clap uses it too).
const EXIT_BAD_INPUT: u8 = 2;

#[derive(Parser)]
#[command(
    name = "ripple",
    version,
    about = "Lineage-aware impact analysis and backfill planning for SQL, dbt and Airflow pipelines",
    after_help = "Examples:\n  ripple lineage fixtures/sql/warehouse_load.sql --dialect postgres\n  echo 'insert into a select * from b' | ripple lineage --format json"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Statement lineage of a SQL script: the tables each statement reads and writes.
    #[command(after_help = LINEAGE_EXAMPLES)]
    Lineage(LineageArgs),
}

const LINEAGE_EXAMPLES: &str = "Examples:
  ripple lineage fixtures/sql/warehouse_load.sql --dialect postgres
  ripple lineage fixtures/sql/merge_upsert.sql --dialect snowflake --format json
  cat job.sql | ripple lineage - --dialect bigquery --strict";

#[derive(clap::Args)]
struct LineageArgs {
    /// The SQL script to read; `-` or nothing reads standard input.
    #[arg(value_name = "FILE|-")]
    file: Option<PathBuf>,
    /// SQL dialect of the script (generic, postgres, snowflake, bigquery, tsql, ...; see docs/dialects.md).
    #[arg(long, short, default_value = "generic", value_parser = parse_dialect)]
    dialect: SqlDialect,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = LineageFormat::Text)]
    format: LineageFormat,
    /// Exit with code 2 when any statement fails to parse (the lineage is still printed).
    #[arg(long)]
    strict: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum LineageFormat {
    /// A table for people.
    Text,
    /// The JSON document other tools read.
    Json,
}

fn parse_dialect(s: &str) -> Result<SqlDialect, String> {
    s.parse().map_err(|e: ripple::Error| e.to_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Lineage(args) => lineage(args),
    }
}

fn lineage(args: LineageArgs) -> anyhow::Result<ExitCode> {
    let path = args.file.unwrap_or_else(|| PathBuf::from("-"));
    let sql = input::read_text(&path)?;
    let lineage = script_lineage(&sql, args.dialect);
    let label = if path == std::path::Path::new("-") {
        STDIN_LABEL.to_string()
    } else {
        path.display().to_string()
    };
    let rendered = match args.format {
        LineageFormat::Json => emit::lineage::json(&lineage),
        LineageFormat::Text => emit::lineage::text(&lineage, &label),
    };
    write_stdout(&rendered)?;
    if args.strict && !lineage.errors.is_empty() {
        for e in &lineage.errors {
            eprintln!(
                "error: {label}:{}:{}: statement {} does not parse: {}",
                e.line, e.column, e.statement, e.message
            );
        }
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes to stdout; a closed pipe (`ripple ... | head`) is not an error.
fn write_stdout(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}
