//! SQL dialects: the names users type, the `sqlparser` dialect each maps to,
//! and how each engine treats the case of identifiers.

use std::fmt;
use std::str::FromStr;

use sqlparser::dialect as sp;

use crate::error::Error;

/// A SQL dialect ripple can read, as named on the command line.
///
/// Several names map to the same parser (see [`SqlDialect::ALIASES`]); the
/// variant is the engine, so that identifier rules stay right per engine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SqlDialect {
    /// sqlparser's permissive generic dialect; the default.
    #[default]
    Generic,
    /// ANSI SQL.
    Ansi,
    /// PostgreSQL.
    Postgres,
    /// Snowflake.
    Snowflake,
    /// Google BigQuery.
    BigQuery,
    /// Amazon Redshift.
    Redshift,
    /// MySQL.
    MySql,
    /// MariaDB (parsed as MySQL).
    MariaDb,
    /// Microsoft SQL Server / T-SQL.
    MsSql,
    /// Apache Hive.
    Hive,
    /// Apache Spark SQL.
    Spark,
    /// Databricks SQL.
    Databricks,
    /// DuckDB.
    DuckDb,
    /// SQLite.
    Sqlite,
    /// ClickHouse.
    ClickHouse,
    /// Trino / Presto / Athena (parsed with the generic dialect).
    Trino,
    /// Oracle.
    Oracle,
    /// Teradata.
    Teradata,
    /// Vertica (parsed as PostgreSQL).
    Vertica,
    /// IBM Db2 (parsed with the ANSI dialect).
    Db2,
    /// Exasol (parsed with the generic dialect).
    Exasol,
    /// Greenplum (parsed as PostgreSQL).
    Greenplum,
    /// Materialize (parsed as PostgreSQL).
    Materialize,
}

/// How an engine compares identifiers, which decides what two spellings of a
/// name denote the same table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdentifierCase {
    /// Unquoted names fold to lower case; quoted names keep their case
    /// (PostgreSQL and most engines).
    FoldUnquotedLower,
    /// Unquoted names fold to upper case, so a quoted all-upper name equals the
    /// unquoted one (Snowflake, Oracle, Db2, Exasol). Printed in lower case.
    FoldUnquotedUpper,
    /// Names are compared without regard to case, quoted or not (SQL Server,
    /// Hive, Spark, DuckDB, SQLite, Trino, Redshift by default, Teradata).
    Insensitive,
}

impl SqlDialect {
    /// Every accepted name and the dialect it selects, in the order `--help`
    /// and error messages list them.
    pub const ALIASES: &'static [(&'static str, SqlDialect)] = &[
        ("generic", SqlDialect::Generic),
        ("ansi", SqlDialect::Ansi),
        ("postgres", SqlDialect::Postgres),
        ("postgresql", SqlDialect::Postgres),
        ("snowflake", SqlDialect::Snowflake),
        ("bigquery", SqlDialect::BigQuery),
        ("redshift", SqlDialect::Redshift),
        ("mysql", SqlDialect::MySql),
        ("mariadb", SqlDialect::MariaDb),
        ("mssql", SqlDialect::MsSql),
        ("tsql", SqlDialect::MsSql),
        ("sqlserver", SqlDialect::MsSql),
        ("hive", SqlDialect::Hive),
        ("impala", SqlDialect::Hive),
        ("spark", SqlDialect::Spark),
        ("sparksql", SqlDialect::Spark),
        ("databricks", SqlDialect::Databricks),
        ("duckdb", SqlDialect::DuckDb),
        ("sqlite", SqlDialect::Sqlite),
        ("clickhouse", SqlDialect::ClickHouse),
        ("trino", SqlDialect::Trino),
        ("presto", SqlDialect::Trino),
        ("athena", SqlDialect::Trino),
        ("oracle", SqlDialect::Oracle),
        ("teradata", SqlDialect::Teradata),
        ("vertica", SqlDialect::Vertica),
        ("db2", SqlDialect::Db2),
        ("exasol", SqlDialect::Exasol),
        ("greenplum", SqlDialect::Greenplum),
        ("materialize", SqlDialect::Materialize),
    ];

    /// The canonical name of this dialect.
    pub fn name(self) -> &'static str {
        Self::ALIASES
            .iter()
            .find(|(_, d)| *d == self)
            .map(|(n, _)| *n)
            .unwrap_or("generic")
    }

    /// Whether dbt's adapter for this engine quotes every name by default
    /// and the engine keeps a quoted name's case (dbt-postgres prints
    /// `"erp_raw"."ORDERS_Tbl"`): a name dbt declares in mixed case is that
    /// exact table, not its lower-case namesake.
    pub fn dbt_names_exact(self) -> bool {
        matches!(
            self,
            SqlDialect::Postgres | SqlDialect::Greenplum | SqlDialect::Materialize
        )
    }

    /// All accepted names, comma-separated, for help and error text.
    pub fn valid_names() -> String {
        Self::ALIASES
            .iter()
            .map(|(n, _)| *n)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The `sqlparser` dialect that parses this engine's SQL.
    pub fn parser_dialect(self) -> Box<dyn sp::Dialect + Send + Sync> {
        use SqlDialect::*;
        match self {
            Generic | Trino | Exasol => Box::new(sp::GenericDialect {}),
            Ansi | Db2 => Box::new(sp::AnsiDialect {}),
            Postgres | Vertica | Greenplum | Materialize => Box::new(sp::PostgreSqlDialect {}),
            Snowflake => Box::new(sp::SnowflakeDialect {}),
            BigQuery => Box::new(sp::BigQueryDialect {}),
            Redshift => Box::new(sp::RedshiftSqlDialect {}),
            MySql | MariaDb => Box::new(sp::MySqlDialect {}),
            MsSql => Box::new(sp::MsSqlDialect {}),
            Hive => Box::new(sp::HiveDialect {}),
            Spark => Box::new(sp::SparkSqlDialect {}),
            Databricks => Box::new(sp::DatabricksDialect {}),
            DuckDb => Box::new(sp::DuckDbDialect {}),
            Sqlite => Box::new(sp::SQLiteDialect {}),
            ClickHouse => Box::new(sp::ClickHouseDialect {}),
            Oracle => Box::new(sp::OracleDialect {}),
            Teradata => Box::new(sp::TeradataDialect {}),
        }
    }

    /// How this engine compares identifiers.
    pub fn identifier_case(self) -> IdentifierCase {
        use SqlDialect::*;
        match self {
            Snowflake | Oracle | Db2 | Exasol => IdentifierCase::FoldUnquotedUpper,
            MsSql | Hive | Spark | Databricks | DuckDb | Sqlite | Trino | Redshift | Teradata => {
                IdentifierCase::Insensitive
            }
            Generic | Ansi | Postgres | Vertica | Greenplum | Materialize | BigQuery | MySql
            | MariaDb | ClickHouse => IdentifierCase::FoldUnquotedLower,
        }
    }

    /// Whether a single quoted identifier may hold a whole dotted path, as
    /// BigQuery's `` `project.dataset.table` `` does.
    pub fn splits_quoted_paths(self) -> bool {
        self == SqlDialect::BigQuery
    }
}

impl fmt::Display for SqlDialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SqlDialect {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase();
        Self::ALIASES
            .iter()
            .find(|(n, _)| *n == wanted)
            .map(|(_, d)| *d)
            .ok_or_else(|| Error::UnknownDialect {
                name: s.to_string(),
                valid: Self::valid_names(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_alias_parses_back_to_its_dialect() {
        for (name, dialect) in SqlDialect::ALIASES {
            assert_eq!(name.parse::<SqlDialect>().unwrap(), *dialect);
            assert_eq!(name.to_uppercase().parse::<SqlDialect>().unwrap(), *dialect);
        }
    }

    #[test]
    fn canonical_name_is_the_first_alias() {
        assert_eq!(SqlDialect::MsSql.name(), "mssql");
        assert_eq!(SqlDialect::Postgres.name(), "postgres");
        assert_eq!(SqlDialect::Trino.to_string(), "trino");
    }

    #[test]
    fn unknown_dialect_lists_the_valid_ones() {
        let err = "oracle9".parse::<SqlDialect>().unwrap_err().to_string();
        assert!(err.contains("oracle9"), "{err}");
        assert!(err.contains("postgres") && err.contains("tsql"), "{err}");
    }
}
