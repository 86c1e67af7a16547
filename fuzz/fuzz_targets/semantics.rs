//! Fuzz what `ripple diff` compares by: canonical text, column lineage with
//! fingerprints, on any bytes in any dialect. No panic, table lineage as
//! `script_lineage` gives it, and canonical text that does not depend on
//! how the same statement is spaced.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../common.rs"]
mod common;
use ripple::sql::{script_lineage, script_semantics};

fuzz_target!(|data: &[u8]| {
    let Some((sql, dialect)) = common::sql_and_dialect(data) else {
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
