//! A database on either engine the plan tests run on, behind one type.
#![allow(dead_code)]

use std::process::Command;

use crate::engines::{Duck, Pg, duckdb, postgres, require};

/// A database on one engine.
pub enum Db {
    Pg(Pg),
    Duck(Duck),
}

impl Db {
    pub fn run(&self, sql: &str) -> Result<String, String> {
        match self {
            Db::Pg(p) => p.run(sql),
            Db::Duck(d) => d.run(sql),
        }
    }

    pub fn run_file(&self, sql: &str) -> Result<String, String> {
        match self {
            Db::Pg(p) => p.run_file(sql),
            Db::Duck(d) => d.run_file(sql),
        }
    }

    /// `$RIPPLE_SQL` for this database.
    pub fn command(&self) -> String {
        match self {
            Db::Pg(p) => p.psql_command(),
            Db::Duck(d) => d.sql_command(),
        }
    }

    pub fn stdin_session(&self) -> Command {
        match self {
            Db::Pg(p) => p.stdin_session(),
            Db::Duck(d) => d.stdin_session(),
        }
    }

    pub fn dialect(&self) -> &'static str {
        match self {
            Db::Pg(_) => "postgres",
            Db::Duck(_) => "duckdb",
        }
    }
}

/// A fresh database on each engine that is present (none is skipped under
/// `CI=true`: a missing engine fails there).
pub fn engines() -> Vec<fn() -> Option<Db>> {
    vec![|| require(postgres(), "PostgreSQL").map(Db::Pg), || {
        require(duckdb(), "the DuckDB CLI").map(Db::Duck)
    }]
}
