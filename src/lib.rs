//! ripple: a lineage-aware impact analyzer and backfill planner.
//!
//! The library follows one data flow, left to right: inputs are read into a
//! project, the project into a lineage graph, the graph answers impact
//! questions, impact becomes a backfill plan, and emitters render each of
//! them. The CLI (`src/main.rs`) is a thin layer over these functions.
//!
//! - [`sql`]: statement and column lineage of SQL (sqlparser), and the
//!   canonical text two versions of a statement are compared by;
//! - [`ingest`]: dbt projects, manifests, plain SQL, Airflow DAG files (and git
//!   revisions of them) → [`project::Project`];
//! - [`graph`]: the lineage graph; [`impact`]: affected partitions;
//!   [`plan`]: the backfill plan; [`diff`]: what changed between two
//!   versions and what it reaches; [`emit`]: every output format.
//!
//! The first step, statement lineage of a script:
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

// One mapping of a cache file is the only unsafe code (cache/mod.rs,
// `map_bounded`); everything else stays safe.
#![deny(unsafe_code)]

pub mod cache;
pub mod config;
pub mod diff;
pub mod emit;
pub mod error;
pub mod graph;
pub mod impact;
pub mod ingest;
pub mod input;
pub mod leftovers;
pub mod plan;
pub mod post;
pub mod project;
pub mod schedule;
pub mod sql;
pub mod stack;
pub mod text;
pub mod time;
pub mod timings;

pub use error::{Error, Result};
