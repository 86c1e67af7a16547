//! Fuzz what `ripple diff` compares by: canonical text, column lineage with
//! fingerprints, on any bytes in any dialect. No panic, table lineage as
//! `script_lineage` gives it, and canonical text that does not depend on
//! how the same statement is spaced.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ripple::sql::{SqlDialect, script_lineage, script_semantics};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let dialects = SqlDialect::ALIASES;
    let dialect = dialects[pick as usize % dialects.len()].1;
    let Ok(sql) = std::str::from_utf8(rest) else {
        return;
    };
    let mut semantics = script_semantics(sql, dialect, &Default::default());
    for s in &mut semantics.statements {
        assert!(s.canonical.is_some());
        s.columns = None;
        s.canonical = None;
    }
    assert_eq!(semantics, script_lineage(sql, dialect));
});
