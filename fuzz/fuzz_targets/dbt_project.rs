//! A dbt project from a pull request: project file, two models, a macro
//! file and a properties file, all fuzzed (Jinja and YAML included).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let p = common::parts(data, 5);
    let mut project = b"name: fuzz\nversion: '1.0'\nprofile: fuzz\n".to_vec();
    project.extend_from_slice(p[0]);
    common::load(&[
        ("dbt_project.yml", &project),
        ("models/a.sql", p[1]),
        ("models/b.sql", p[2]),
        ("macros/m.sql", p[3]),
        ("models/schema.yml", p[4]),
    ]);
});
