//! Session context of a script: after `USE`, unqualified names point into
//! the database and schema it names, statement by statement, until the
//! next `USE`.

use sqlparser::ast::{ObjectName, Use};

use super::dialect::SqlDialect;
use super::extract::TableLineage;
use super::names::relation_name;
use super::names::{print_parts, relation_parts};

/// The database and schema unqualified names fall in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Session {
    database: Option<String>,
    schema: Option<String>,
}

/// The schema a database's unqualified names fall in, where the engine has
/// one by default: PUBLIC on Snowflake, `default` in a Databricks catalog,
/// the user's default schema on SQL Server (`dbo` as a rule).
fn default_schema(dialect: SqlDialect) -> Option<&'static str> {
    match dialect {
        SqlDialect::Snowflake => Some("public"),
        SqlDialect::Databricks => Some("default"),
        SqlDialect::MsSql => Some("dbo"),
        _ => None,
    }
}

/// The parts of a name `USE` gives, folded; none for a variable.
fn name_parts(name: &ObjectName, dialect: SqlDialect) -> Vec<String> {
    relation_name(name, dialect)
        .map(|r| relation_parts(&r))
        .unwrap_or_default()
}

impl Session {
    /// Follows one `USE`. Warehouses, roles and `USE DEFAULT` change no
    /// names. A bare `USE x` names a database on Snowflake (two levels
    /// below it) and a schema-level database elsewhere (MySQL, Hive,
    /// Spark, T-SQL, DuckDB: one level).
    pub fn apply(&mut self, u: &Use, dialect: SqlDialect) {
        let parts = |name: &ObjectName| name_parts(name, dialect);
        // `USE DATABASE IDENTIFIER($db)`: only the run knows where names
        // point, so they are read as written again (never as `.s.t`).
        let named = match u {
            Use::Catalog(n) | Use::Database(n) | Use::Schema(n) | Use::Object(n) => Some(n),
            _ => None,
        };
        // `USE SELECT`: the parser lets an unquoted reserved word through
        // as a name no engine would take; it moves nothing.
        if named.is_some_and(reserved) {
            return;
        }
        if named.is_some_and(|n| parts(n).is_empty()) {
            *self = Session::default();
            return;
        }
        // Databases are schemas where the engine has no level above them.
        let database_is_schema = matches!(
            dialect,
            SqlDialect::Databricks
                | SqlDialect::Spark
                | SqlDialect::Hive
                | SqlDialect::MySql
                | SqlDialect::MariaDb
        );
        match u {
            Use::Database(name) if database_is_schema => {
                self.schema = Some(print_parts(&parts(name)));
            }
            // A database (bare `USE d` on Snowflake and T-SQL): names then
            // fall in its default schema.
            Use::Catalog(name) | Use::Database(name) => self.use_database(name, dialect),
            Use::Object(name)
                if matches!(dialect, SqlDialect::Snowflake | SqlDialect::MsSql)
                    && name.0.len() == 1 =>
            {
                self.use_database(name, dialect)
            }
            Use::Schema(name) | Use::Object(name) => match parts(name).as_slice() {
                [schema] => self.schema = Some(print_parts(std::slice::from_ref(schema))),
                [database @ .., schema] if !database.is_empty() => {
                    self.database = Some(print_parts(database));
                    self.schema = Some(print_parts(std::slice::from_ref(schema)));
                }
                _ => {}
            },
            Use::Warehouse(_) | Use::Role(_) | Use::SecondaryRoles(_) | Use::Default => {}
        }
    }

    fn use_database(&mut self, name: &ObjectName, dialect: SqlDialect) {
        self.database = Some(print_parts(&name_parts(name, dialect)));
        self.schema = default_schema(dialect).map(str::to_string);
    }

    /// `relation` with what the session adds: the schema (and database)
    /// before a bare name, the database before `schema.table`. Stages,
    /// paths and `#temp` tables are left as they are.
    pub fn qualify(&self, relation: &str) -> String {
        if self.database.is_none() && self.schema.is_none()
            || relation.starts_with('#')
            || super::names::is_path(relation)
        {
            return relation.to_string();
        }
        let n = relation_parts(relation).len();
        let prefix = match (n, &self.database, &self.schema) {
            (1, Some(d), Some(s)) => format!("{d}.{s}."),
            (1, None, Some(s)) => format!("{s}."),
            (2, Some(d), _) => format!("{d}."),
            _ => String::new(),
        };
        format!("{prefix}{relation}")
    }

    /// Every relation of `lineage`, qualified.
    pub fn qualify_all(&self, lineage: &mut TableLineage) {
        if self.database.is_none() && self.schema.is_none() {
            return;
        }
        for set in [
            &mut lineage.sources,
            &mut lineage.targets,
            &mut lineage.temporary,
            &mut lineage.dropped,
            &mut lineage.replaced,
        ] {
            *set = set.iter().map(|r| self.qualify(r)).collect();
        }
    }
}

/// Whether a name holds an unquoted word SQL reserves (`SELECT`, `WHERE`,
/// `ORDER` ...): a syntax error on every engine, however it parsed.
fn reserved(name: &ObjectName) -> bool {
    use sqlparser::keywords::{ALL_KEYWORDS, ALL_KEYWORDS_INDEX, RESERVED_FOR_TABLE_ALIAS};
    name.0.iter().filter_map(|p| p.as_ident()).any(|i| {
        i.quote_style.is_none()
            && ALL_KEYWORDS
                .binary_search(&i.value.to_ascii_uppercase().as_str())
                .is_ok_and(|k| RESERVED_FOR_TABLE_ALIAS.contains(&ALL_KEYWORDS_INDEX[k]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::ast::Statement;
    use sqlparser::parser::Parser;

    fn session(sql: &str, dialect: SqlDialect) -> Session {
        let mut s = Session::default();
        for stmt in Parser::parse_sql(dialect.parser_dialect().as_ref(), sql).unwrap() {
            if let Statement::Use(u) = stmt {
                s.apply(&u, dialect);
            }
        }
        s
    }

    #[test]
    fn use_statements_qualify_names_per_dialect() {
        let s = session("USE DATABASE prod; USE SCHEMA mart;", SqlDialect::Snowflake);
        assert_eq!(s.qualify("kpis"), "prod.mart.kpis");
        assert_eq!(s.qualify("raw.events"), "prod.raw.events");
        assert_eq!(s.qualify("a.b.c"), "a.b.c");
        let s = session("USE sales", SqlDialect::Spark);
        assert_eq!(s.qualify("orders"), "sales.orders");
        assert_eq!(s.qualify("other.orders"), "other.orders");
        let s = session("USE SCHEMA db.staging", SqlDialect::Snowflake);
        assert_eq!(s.qualify("users"), "db.staging.users");
        let s = session("USE WAREHOUSE wh", SqlDialect::Snowflake);
        assert_eq!(s, Session::default());
        // A reserved word is no name (the token soup found `USE SELECT`);
        // quoted, it is one.
        let s = session("USE sales; USE SELECT", SqlDialect::Generic);
        assert_eq!(s.qualify("orders"), "sales.orders");
        let s = session("USE \"select\"", SqlDialect::Generic);
        assert_eq!(s.qualify("orders"), "select.orders");
        let s = session("USE shop", SqlDialect::MySql);
        assert_eq!(s.qualify("@stage/x"), "@stage/x");
        assert_eq!(s.qualify("#tmp"), "#tmp");
        assert_eq!(s.qualify("./orders.csv"), "./orders.csv");
        // Where a database is a schema, `USE DATABASE` names the schema.
        let s = session("USE DATABASE sales", SqlDialect::Databricks);
        assert_eq!(s.qualify("orders"), "sales.orders");
        // A database alone leaves names in its default schema.
        let s = session("USE DATABASE prod", SqlDialect::Snowflake);
        assert_eq!(s.qualify("kpis"), "prod.public.kpis");
        assert_eq!(s.qualify("mart.kpis"), "prod.mart.kpis");
        let s = session("USE CATALOG main", SqlDialect::Databricks);
        assert_eq!(s.qualify("orders"), "main.default.orders");
        let s = session("USE WideWorldImportersDW", SqlDialect::MsSql);
        assert_eq!(s.qualify("Sales"), "wideworldimportersdw.dbo.Sales");
        assert_eq!(s.qualify("Fact.Sale"), "wideworldimportersdw.Fact.Sale");
        // A variable leaves names as written, whatever came before.
        let s = session(
            "USE DATABASE prod; USE SCHEMA mart; USE SCHEMA IDENTIFIER($s)",
            SqlDialect::Snowflake,
        );
        assert_eq!(s.qualify("t"), "t");
        let s = session("USE DATABASE IDENTIFIER($db)", SqlDialect::Snowflake);
        assert_eq!(s.qualify("raw.customers"), "raw.customers");
    }
}
