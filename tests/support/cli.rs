//! The worked example from DESIGN.md run through the CLI, shared by the
//! impact and plan tests so the request is spelled out once.

#![allow(dead_code)]

use assert_cmd::Command;

/// `ripple <subcommand>` on the worked example (`raw.orders` wrong for
/// 2026-01-10..2026-01-12, as of 2026-02-01) in the given `--format`.
pub fn worked_example(subcommand: &str, format: &str) -> Command {
    let mut cmd = Command::cargo_bin("ripple").unwrap();
    cmd.args([
        subcommand,
        "raw.orders",
        "--from",
        "2026-01-10",
        "--to",
        "2026-01-12",
        "--as-of",
        "2026-02-01",
        "--project",
        "fixtures/worked_example/declared",
        "--format",
        format,
    ]);
    cmd
}
