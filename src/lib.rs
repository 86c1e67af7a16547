//! ripple: a lineage-aware impact analyzer and backfill planner.
//!
//! The library follows one data flow, left to right: inputs are read into a
//! project, the project into a lineage graph, the graph answers impact
//! questions, impact becomes a backfill plan, and emitters render each of
//! them. The CLI (`src/main.rs`) is a thin layer over these functions.
//!
//! Today the library holds the first step every later one stands on:
//! statement-level table lineage of SQL ([`sql::script_lineage`]).

pub mod emit;
pub mod error;
pub mod input;
pub mod sql;

pub use error::{Error, Result};
