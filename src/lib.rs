//! ripple: a lineage-aware impact analyzer and backfill planner.
//!
//! The library follows one data flow, left to right: inputs are read into a
//! project, the project into a lineage graph, the graph answers impact
//! questions, impact becomes a backfill plan, and emitters render each of
//! them. The CLI (`src/main.rs`) is a thin layer over these functions.
//!
//! Today the library holds the first step every later one stands on:
//! statement-level table lineage of SQL.
//!
//! ```
//! use ripple::sql::{SqlDialect, script_lineage};
//!
//! let sql = "create temp table s as select * from raw.orders;
//!            insert into mart.orders select * from s join crm.customers using (id);";
//! let lineage = script_lineage(sql, SqlDialect::Postgres);
//! assert_eq!(lineage.sources, ["crm.customers", "raw.orders"]);
//! assert_eq!(lineage.targets, ["mart.orders"]);
//! assert_eq!(lineage.intermediates, ["s"]);
//! ```

pub mod config;
pub mod diff;
pub mod emit;
pub mod error;
pub mod graph;
pub mod impact;
pub mod ingest;
pub mod input;
pub mod plan;
pub mod project;
pub mod schedule;
pub mod sql;
pub mod time;

pub use error::{Error, Result};
