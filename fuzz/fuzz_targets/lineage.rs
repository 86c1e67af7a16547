//! Fuzz the statement lineage extractor: any bytes, any dialect, no panic,
//! and every statement number accounted for exactly once.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ripple::sql::{SqlDialect, script_lineage};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let dialects = SqlDialect::ALIASES;
    let dialect = dialects[pick as usize % dialects.len()].1;
    let Ok(sql) = std::str::from_utf8(rest) else {
        return;
    };
    let lineage = script_lineage(sql, dialect);
    let mut seen: Vec<usize> = lineage
        .statements
        .iter()
        .map(|s| s.index)
        .chain(lineage.errors.iter().map(|e| e.statement))
        .collect();
    seen.sort_unstable();
    assert!(seen.iter().enumerate().all(|(i, n)| *n == i + 1));
});
