//! Renderers: each turns one of the library's results into text, and knows
//! nothing of how that result was computed.

pub mod check;
pub mod dags;
pub mod diff;
pub mod dot;
pub mod escape;
pub mod graph;
pub mod html;
pub mod impact;
pub mod layout;
pub mod lineage;
pub mod mermaid;
pub mod openlineage;
pub mod pieces;
pub mod plan;
pub mod schedule;
pub mod svg;

/// The version of every JSON document ripple writes; bumped on any change
/// that could break a reader.
pub const SCHEMA_VERSION: u32 = 1;

/// Text for people or JSON for tools: the formats of `check`, `dags`,
/// `schedule` and `lineage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// For people.
    Text,
    /// The JSON document other tools read.
    Json,
}
