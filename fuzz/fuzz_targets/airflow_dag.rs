//! An Airflow DAG file from a pull request (parsed, never run), with a SQL
//! file it may name and a ripple.yml pointing at the DAG folder.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let p = common::parts(data, 2);
    common::load(&[
        ("ripple.yml", b"dags: [dags]\n"),
        ("dags/d.py", p[0]),
        ("dags/sql/q.sql", p[1]),
    ]);
});
