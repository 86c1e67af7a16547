//! What every fuzz target reads its input as: the first byte picks the
//! dialect, the rest is the SQL (when it is UTF-8).

use ripple::sql::SqlDialect;

/// The SQL text and dialect `data` stands for.
pub fn sql_and_dialect(data: &[u8]) -> Option<(&str, SqlDialect)> {
    let (&pick, rest) = data.split_first()?;
    let dialects = SqlDialect::ALIASES;
    let dialect = dialects[pick as usize % dialects.len()].1;
    Some((std::str::from_utf8(rest).ok()?, dialect))
}
