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
    /// Temporary tables live in a schema of their own on PostgreSQL and
    /// DuckDB, not on the search path's first: their names stay bare.
    temporary: std::collections::BTreeSet<String>,
    /// The schemas after the first on a `search_path`: a read of a bare
    /// name may find its table in any of them.
    further: Vec<String>,
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
    /// Follows `stmt` if it moves names: `USE`, `SET search_path` (and
    /// DuckDB's `SET schema`).
    pub fn follow(&mut self, stmt: &sqlparser::ast::Statement, dialect: SqlDialect) {
        match stmt {
            sqlparser::ast::Statement::Use(u) => self.apply(u, dialect),
            sqlparser::ast::Statement::Set(set) => self.set(set, dialect),
            _ => {}
        }
    }

    /// `SET search_path TO a, b` (PostgreSQL, Redshift), `SET search_path
    /// = 'a,b'` and `SET schema = 'a'` (DuckDB): unqualified names fall in
    /// the first schema (where `create` puts a table; a read of a name the
    /// first schema lacks would find it further on, which ripple cannot
    /// see: keep one schema on the path). `DEFAULT` resets it.
    pub fn set(&mut self, set: &sqlparser::ast::Set, dialect: SqlDialect) {
        use sqlparser::ast::{Expr, Set, Value};
        let Set::SingleAssignment {
            variable, values, ..
        } = set
        else {
            return;
        };
        let var = variable.to_string().to_ascii_lowercase();
        if var != "search_path" && !(var == "schema" && dialect == SqlDialect::DuckDb) {
            return;
        }
        let fold = |v: &str, quoted: bool| {
            if quoted || dialect == SqlDialect::DuckDb {
                v.to_string()
            } else {
                v.to_lowercase()
            }
        };
        // Every schema named, in order (`$user` and `pg_catalog` hold no
        // table of a pipeline).
        let mut all: Vec<String> = Vec::new();
        for e in values {
            match e {
                Expr::Identifier(i) if i.value != "$user" => {
                    all.push(fold(&i.value, i.quote_style.is_some()))
                }
                Expr::Value(v) => {
                    if let Value::SingleQuotedString(s) = &v.value {
                        all.extend(
                            s.split(',')
                                .map(|p| p.trim().trim_matches('"').to_string())
                                .filter(|p| !p.is_empty() && p != "$user"),
                        );
                    }
                }
                _ => {}
            }
        }
        all.retain(|s| !s.eq_ignore_ascii_case("pg_catalog"));
        let first = values.iter().find_map(|e| match e {
            Expr::Identifier(i)
                if i.value.eq_ignore_ascii_case("default") && i.quote_style.is_none() =>
            {
                Some(None)
            }
            Expr::Identifier(i) if i.value != "$user" => {
                Some(Some(fold(&i.value, i.quote_style.is_some())))
            }
            Expr::Value(v) => match &v.value {
                Value::SingleQuotedString(s) => s
                    .split(',')
                    .map(|p| p.trim().trim_matches('"'))
                    .find(|p| !p.is_empty() && *p != "$user")
                    .map(|p| Some(p.to_string())),
                _ => None,
            },
            _ => None,
        });
        match first {
            Some(Some(schema)) => {
                self.database = None;
                self.further = all
                    .iter()
                    .skip_while(|s| **s != schema)
                    .skip(1)
                    .map(|s| print_parts(std::slice::from_ref(s)))
                    .collect();
                self.schema = Some(print_parts(std::slice::from_ref(&schema)));
            }
            Some(None) => *self = Session::default(),
            None => {}
        }
    }

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
            || self.temporary.contains(relation)
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

    /// Every name a bare `relation` may denote, in the order the engine
    /// looks: the first schema's, then the rest of the search path's.
    pub fn candidates(&self, relation: &str) -> Vec<String> {
        let mut out = vec![self.qualify(relation)];
        if relation_parts(relation).len() == 1 && !self.temporary.contains(relation) {
            out.extend(self.further.iter().map(|s| format!("{s}.{relation}")));
        }
        out
    }

    /// `known` with every relation the session qualifies also under the
    /// name a statement writes for it; `None` when the session adds
    /// nothing (the map is used as it is).
    pub fn as_written(
        &self,
        known: &super::columns::KnownColumns,
    ) -> Option<super::columns::KnownColumns> {
        let prefix = match (&self.database, &self.schema) {
            (None, None) => return None,
            (Some(d), Some(s)) => format!("{d}.{s}."),
            (None, Some(s)) => format!("{s}."),
            (Some(d), None) => format!("{d}."),
        };
        let mut out = known.clone();
        for (k, v) in known {
            if let Some(bare) = k.strip_prefix(&prefix) {
                out.entry(bare.to_string()).or_insert_with(|| v.clone());
            }
        }
        Some(out)
    }

    /// Every relation of `lineage`, qualified; temporary tables it makes
    /// are remembered where the engine keeps them apart (PostgreSQL,
    /// Redshift, DuckDB), and left bare from then on.
    pub fn qualify_all(&mut self, lineage: &mut TableLineage, dialect: SqlDialect) {
        if matches!(
            dialect,
            SqlDialect::Postgres | SqlDialect::Redshift | SqlDialect::DuckDb
        ) {
            self.temporary.extend(
                lineage
                    .temporary
                    .iter()
                    .filter(|t| relation_parts(t).len() == 1)
                    .cloned(),
            );
        }
        if self.database.is_none() && self.schema.is_none() {
            return;
        }
        // A bare name read may be a table of any schema on the path: all of
        // them are read, as far as lineage knows (wider, never short).
        if !self.further.is_empty() {
            let mut more = Vec::new();
            for r in &lineage.sources {
                if relation_parts(r).len() == 1 && !self.temporary.contains(r) {
                    more.extend(self.further.iter().map(|s| format!("{s}.{r}")));
                }
            }
            lineage.sources.extend(more);
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

/// Whether `sql` sets its session's time zone (`set time zone 'X'`, `set
/// timezone = 'X'`, DuckDB's `set TimeZone = 'X'`): a timestamp literal
/// without an offset is then read in that zone. Read as text: a mention in
/// a comment only makes ripple write offsets it did not need.
pub fn sets_time_zone(sql: &str) -> bool {
    let words: Vec<String> = sql
        .split(|c: char| c.is_whitespace() || c == ';' || c == '=')
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    words.windows(3).any(|w| {
        w[0] == "set"
            && ((w[1] == "time" && w[2] == "zone")
                || (matches!(w[1].as_str(), "session" | "local")
                    && (w[2] == "timezone" || w[2] == "time")))
    }) || words
        .windows(2)
        .any(|w| w[0] == "set" && w[1] == "timezone")
}

#[cfg(test)]
mod time_zone_tests {
    use super::sets_time_zone;

    #[test]
    fn a_session_time_zone_is_seen_however_it_is_written() {
        assert!(sets_time_zone("SET TIME ZONE 'America/New_York'; select 1"));
        assert!(sets_time_zone("set timezone = 'UTC';"));
        assert!(sets_time_zone("SET TimeZone='Asia/Kolkata'"));
        assert!(sets_time_zone("set session time zone 'UTC'"));
        assert!(!sets_time_zone(
            "set search_path = mart; select time_zone from t"
        ));
    }
}
