//! SQL statement lineage on sqlparser's AST: which tables each statement of
//! a script reads and writes, and what the script as a whole reads and writes.

mod bounds;
mod canonical;
mod columns;
mod dialect;
mod extract;
pub(crate) mod hard_coded;
mod names;
mod parse;
mod recover;
pub mod rewrite;
mod script;
mod secrets;
mod session;
mod split;
pub mod tables;

pub(crate) use bounds::positional;
pub use bounds::{MovingBound, moving_bound, now_like, time_like};
pub use canonical::canonical_text;
pub use columns::{
    ColumnLineage, ColumnRef, KnownColumns, OutputColumn, column_lineage, unique_names,
};
pub use dialect::{IdentifierCase, SqlDialect};
pub use extract::StatementKind;
pub use names::{is_path, relation_of_parts};
pub use parse::{for_each_statement, with_located_statements, with_statements};
pub use script::{
    ScriptLineage, ScriptReading, StatementError, StatementLineage, WholeLineage, read_cached,
    script_column_edges, script_lineage, script_lineage_with_columns, script_semantics,
};
pub use secrets::{mask_secrets, userinfo_end};
pub use session::sets_time_zone;
pub use split::statement_count;

/// The relation name ripple prints for a parsed table name (`None` for
/// what is not a table).
pub fn relation_name_of(name: &sqlparser::ast::ObjectName, dialect: SqlDialect) -> Option<String> {
    names::relation_name(name, dialect)
}
