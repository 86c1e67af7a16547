//! `ripple.yml` keys that name datasets: an `upstream:` key that names no
//! dataset the entry's dataset reads, and two spellings of one dataset or
//! of one upstream, are refused with the file, line and keys, never
//! silently dropped (an impact that comes out short).

#[path = "support/temp_project.rs"]
mod temp_project;
use temp_project::temp_project;

use std::process::{Command, Output};

/// A daily pipeline of plain SQL jobs: `raw.orders` → `mart.stg_orders` →
/// `mart.orders_daily` → `mart.orders_7d` (a 7-day window over the daily
/// totals), with `datasets:` entries `entries` after `raw.orders`'.
fn project(entries: &str) -> tempfile::TempDir {
    let yml = format!(
        "dialect: duckdb\nmodels: [jobs]\ndatasets:\n  raw.orders: {{ grain: day, start: 2026-01-01 }}\n{entries}"
    );
    temp_project(&[
        ("ripple.yml", &yml),
        (
            "jobs/stg_orders.sql",
            "create table mart.stg_orders as\nselect order_id, cast(ordered_at as date) as order_date, amount from raw.orders;\n",
        ),
        (
            "jobs/orders_daily.sql",
            "create table mart.orders_daily as\nselect order_date, sum(amount) as revenue from mart.stg_orders group by order_date;\n",
        ),
        (
            "jobs/orders_7d.sql",
            "create table mart.orders_7d as\nselect d.order_date, sum(w.revenue) as revenue_7d\nfrom mart.orders_daily d\njoin mart.orders_daily w on w.order_date between d.order_date - interval '6 days' and d.order_date\ngroup by d.order_date;\n",
        ),
    ])
}

fn ripple(args: &[&str], dir: &tempfile::TempDir) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ripple"))
        .args(args)
        .arg("--project")
        .arg(dir.path())
        .arg("--no-cache")
        .output()
        .unwrap()
}

/// `ripple impact` of two days of `raw.orders`.
fn impact(dir: &tempfile::TempDir) -> Output {
    ripple(
        &[
            "impact",
            "raw.orders",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-11",
            "--as-of",
            "2026-02-01",
        ],
        dir,
    )
}

/// The message `impact` refuses the project with (exit 2, nothing on
/// stdout); `ripple check` must refuse it with the same message.
fn refusal(dir: &tempfile::TempDir) -> String {
    let out = impact(dir);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "impact: {stderr}");
    assert!(out.stdout.is_empty(), "impact printed a result: {stderr}");
    let check = ripple(&["check"], dir);
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(2), "check: {stdout}");
    let message = stderr.trim().trim_start_matches("error: ");
    assert!(
        stdout.contains(&format!("error[time-facts]: {message}")),
        "check does not say `{message}`: {stdout}"
    );
    message.to_string()
}

/// `path/ripple.yml:line:column: `, as the message starts.
fn place(dir: &tempfile::TempDir, line: u32, column: u32) -> String {
    format!(
        "{}:{line}:{column}: ",
        dir.path().join("ripple.yml").display()
    )
}

#[test]
fn a_correct_upstream_key_widens_the_window() {
    // Inferred from the SQL, orders_7d reads [-6, 0]: 8 days of it are hit.
    // The declared [-1, 30] reaches 30 days back and 1 ahead: 33 days.
    for key in ["mart.orders_daily", "table.mart.orders_daily"] {
        let dir = project(&format!(
            "  mart.orders_7d:\n    upstream:\n      {key}: {{ window: [-1, 30] }}\n"
        ));
        let out = impact(&dir);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}");
        let row = stdout
            .lines()
            .find(|l| l.starts_with("mart.orders_7d "))
            .unwrap_or_else(|| panic!("no orders_7d row: {stdout}"));
        assert!(
            row.contains("2025-12-11..2026-01-12  33") && row.contains("window [-1, 30]"),
            "{key}: {row}"
        );
        let check = ripple(&["check"], &dir);
        assert!(check.status.success(), "{key}: {check:?}");
    }
}

#[test]
fn an_upstream_key_naming_no_dataset_is_refused_with_its_line() {
    let dir = project(
        "  mart.orders_7d:\n    upstream:\n      mart.orders_dialy: { window: [-1, 30] }\n",
    );
    let message = refusal(&dir);
    assert!(
        message.starts_with(&format!(
            "{}datasets.mart.orders_7d.upstream.mart.orders_dialy names no dataset of the project (did you mean `mart.orders_daily`?)",
            place(&dir, 7, 7)
        )),
        "{message}"
    );
    // What it reads, and what to do.
    assert!(
        message.contains("`mart.orders_7d` reads `mart.orders_daily`")
            && message.contains("or remove the key"),
        "{message}"
    );
}

#[test]
fn an_upstream_key_naming_a_dataset_read_only_through_another_is_refused() {
    // raw.orders is two hops up: no edge runs from it to orders_7d, so its
    // mapping would never be used.
    let dir = project("  mart.orders_7d: { upstream: { raw.orders: { window: [-1, 30] } } }\n");
    let message = refusal(&dir);
    assert!(
        message.starts_with(&format!(
            "{}datasets.mart.orders_7d.upstream.raw.orders: `raw.orders` is a dataset of the project, but not one `mart.orders_7d` reads directly",
            place(&dir, 5, 33)
        )),
        "{message}"
    );
    assert!(
        message.contains("would never be used")
            && message.contains("`mart.orders_7d` reads `mart.orders_daily`"),
        "{message}"
    );
}

#[test]
fn two_spellings_of_one_dataset_are_refused_naming_both() {
    // Its name and its node id: before, one entry's grain won and the
    // other's window was dropped, whatever the order.
    let dir = project(
        "  mart.orders_7d:\n    grain: day\n    upstream: { mart.orders_daily: { window: [-1, 30] } }\n  table.mart.orders_7d: { grain: month }\n",
    );
    let message = refusal(&dir);
    assert!(
        message.starts_with(&format!(
            "{}datasets.mart.orders_7d (line 5, column 3) and datasets.table.mart.orders_7d (line 8, column 3) name the same dataset `mart.orders_7d`",
            place(&dir, 8, 3)
        )),
        "{message}"
    );
    assert!(message.contains("keep one key"), "{message}");
}

#[test]
fn two_spellings_of_one_upstream_are_refused_naming_both() {
    let dir = project(
        "  mart.orders_7d:\n    upstream:\n      table.mart.orders_daily: { window: [-1, 30] }\n      mart.orders_daily: { window: [-6, 0] }\n",
    );
    let message = refusal(&dir);
    assert!(
        message.starts_with(&format!(
            "{}datasets.mart.orders_7d.upstream: `table.mart.orders_daily` (line 7, column 7) and `mart.orders_daily` (line 8, column 7) name the same upstream `mart.orders_daily`",
            place(&dir, 8, 7)
        )),
        "{message}"
    );
}

#[test]
fn a_dataset_key_naming_nothing_is_refused_with_its_line() {
    // The refusal the new ones follow, now with its place; the first
    // problem in the file is the one named.
    let dir = project(
        "  mart.orders_7x: { grain: day }\n  mart.orders_7d: { upstream: { nope: all } }\n",
    );
    let message = refusal(&dir);
    assert_eq!(
        message,
        format!(
            "{}datasets.mart.orders_7x names no dataset of the project; did you mean `mart.orders_7d`? (and 1 more such key later in the file)",
            place(&dir, 5, 3)
        )
    );
}

#[test]
fn a_partition_column_its_dataset_lacks_is_an_error_of_check() {
    // A misspelt one once passed `check` and `impact`, exit 0.
    let dir = project("  mart.stg_orders: { grain: day, partition_column: order_dte }\n");
    let out = ripple(&["check"], &dir);
    assert_eq!(out.status.code(), Some(2));
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("ripple.yml:5: `mart.stg_orders`'s partition_column `order_dte` is not one of its columns (order_id, order_date, amount)"),
        "{text}"
    );
    // Spelt right: no such error.
    let dir = project("  mart.stg_orders: { grain: day, partition_column: order_date }\n");
    let out = ripple(&["check"], &dir);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(!text.contains("partition_column"), "{text}");
}
