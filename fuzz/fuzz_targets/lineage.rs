//! Fuzz the statement lineage extractor: any bytes, any dialect, no panic,
//! and every statement number accounted for exactly once.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../common.rs"]
mod common;
use ripple::sql::script_lineage;

fuzz_target!(|data: &[u8]| {
    let Some((sql, dialect)) = common::sql_and_dialect(data) else {
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
