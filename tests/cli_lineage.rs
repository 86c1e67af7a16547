//! `ripple lineage` end to end: arguments, exit codes, and the exact JSON
//! and text it prints for the bundled fixtures (insta snapshots).

use assert_cmd::Command;
use predicates::prelude::*;

fn ripple() -> Command {
    Command::cargo_bin("ripple").unwrap()
}

fn lineage_json(args: &[&str], stdin: Option<&str>) -> serde_json::Value {
    let mut cmd = ripple();
    cmd.arg("lineage").args(args).args(["--format", "json"]);
    if let Some(sql) = stdin {
        cmd.write_stdin(sql);
    }
    let out = cmd.assert().success().get_output().stdout.clone();
    serde_json::from_slice(&out).expect("valid JSON")
}

/// The exact bytes `ripple lineage FILE -d DIALECT -f json` prints.
fn fixture_json(file: &str, dialect: &str) -> String {
    let out = ripple()
        .args(["lineage", file, "--dialect", dialect, "--format", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

#[test]
fn fixture_warehouse_load_json() {
    let out = fixture_json("fixtures/sql/warehouse_load.sql", "postgres");
    insta::assert_snapshot!("warehouse_load", out);
}

#[test]
fn fixture_merge_upsert_json() {
    let out = fixture_json("fixtures/sql/merge_upsert.sql", "snowflake");
    insta::assert_snapshot!("merge_upsert", out);
}

#[test]
fn fixture_hive_partition_overwrite_json() {
    let out = fixture_json("fixtures/sql/hive_partition_overwrite.sql", "hive");
    insta::assert_snapshot!("hive_partition_overwrite", out);
}

#[test]
fn fixture_warehouse_load_text() {
    let out = ripple()
        .args([
            "lineage",
            "fixtures/sql/warehouse_load.sql",
            "-d",
            "postgres",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    insta::assert_snapshot!("warehouse_load_text", String::from_utf8(out).unwrap());
}

#[test]
fn json_carries_the_contract_keys() {
    let doc = lineage_json(&["-"], Some("insert into a select * from b"));
    assert_eq!(doc["schema_version"], 1);
    for key in [
        "sources",
        "targets",
        "intermediates",
        "statements",
        "errors",
    ] {
        assert!(doc[key].is_array(), "{key} missing in {doc}");
    }
    let stmt = &doc["statements"][0];
    for key in ["index", "line", "sources", "targets", "kind"] {
        assert!(!stmt[key].is_null(), "{key} missing in {stmt}");
    }
    assert_eq!(stmt["kind"], "insert");
}

#[test]
fn no_file_argument_reads_stdin() {
    let doc = lineage_json(&[], Some("select * from t"));
    assert_eq!(doc["sources"], serde_json::json!(["t"]));
}

#[test]
fn errors_are_listed_and_the_rest_still_analysed() {
    let doc = lineage_json(
        &["-", "--dialect", "postgres"],
        Some("insert into a select * from b;\nselect (( from c;\ninsert into d select * from e;"),
    );
    assert_eq!(doc["targets"], serde_json::json!(["a", "d"]));
    let errors = doc["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["statement"], 2);
    assert_eq!(errors[0]["line"], 2);
    assert!(errors[0]["column"].as_u64().unwrap() > 1);
    assert!(errors[0]["message"].as_str().unwrap().contains("Expected"));
}

#[test]
fn strict_turns_parse_errors_into_exit_2() {
    ripple()
        .args(["lineage", "--strict"])
        .write_stdin("select 1 from a;\nselect (( from b;")
        .assert()
        .code(2)
        .stdout(predicate::str::contains("a"))
        .stderr(predicate::str::contains("<stdin>:2:"));
    ripple()
        .args(["lineage", "--strict"])
        .write_stdin("select 1 from a")
        .assert()
        .success();
}

#[test]
fn empty_input_is_empty_lineage() {
    let doc = lineage_json(&[], Some(""));
    assert_eq!(doc["statements"], serde_json::json!([]));
    assert_eq!(doc["errors"], serde_json::json!([]));
}

#[test]
fn unknown_dialect_exits_2_and_lists_the_valid_ones() {
    ripple()
        .args(["lineage", "--dialect", "postgress"])
        .write_stdin("select 1")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown dialect 'postgress'"))
        .stderr(predicate::str::contains("snowflake"));
}

#[test]
fn missing_file_exits_2_with_one_line() {
    ripple()
        .args(["lineage", "no/such/file.sql"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read no/such/file.sql"))
        .stderr(predicate::function(|s: &str| s.lines().count() == 1));
}

#[test]
fn non_utf8_input_exits_2_and_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("latin1.sql");
    std::fs::write(&path, b"select 1;\nselect 'caf\xe9' from t").unwrap();
    ripple()
        .arg("lineage")
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not UTF-8"))
        .stderr(predicate::str::contains("line 2, column 12"));
}

#[test]
fn help_shows_examples_and_version_works() {
    ripple()
        .args(["lineage", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("Examples:"))
        .stdout(predicate::str::contains("ripple lineage fixtures/sql/"));
    ripple()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("Examples:"));
    ripple()
        .arg("--version")
        .assert()
        .success()
        .stdout(predicate::str::starts_with("ripple "));
}

#[test]
fn output_is_byte_identical_across_runs() {
    let run = || {
        ripple()
            .args([
                "lineage",
                "fixtures/sql/warehouse_load.sql",
                "-d",
                "postgres",
                "-f",
                "json",
            ])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone()
    };
    assert_eq!(run(), run());
}

#[test]
fn usage_errors_exit_2() {
    ripple()
        .args(["lineage", "--format", "xml"])
        .assert()
        .code(2);
    ripple().arg("frobnicate").assert().code(2);
}

#[test]
fn columns_flag_adds_column_lineage_per_statement() {
    let sql = "insert into mart.daily (d, revenue)\n\
               select o.order_date, sum(o.amount) from stage.orders o\n\
               join crm.customers c using (customer_id) where c.active group by 1;";
    let plain = lineage_json(&["-"], Some(sql));
    assert!(plain["statements"][0].get("columns").is_none());
    let doc = lineage_json(&["-", "--columns"], Some(sql));
    let c = &doc["statements"][0]["columns"];
    assert_eq!(
        c["columns"],
        serde_json::json!([
            {"name": "d", "sources": [{"relation": "stage.orders", "column": "order_date"}]},
            {"name": "revenue", "sources": [{"relation": "stage.orders", "column": "amount"}]},
        ])
    );
    assert_eq!(
        c["conditions"],
        serde_json::json!([
            {"relation": "crm.customers", "column": "active"},
            {"relation": "crm.customers", "column": "customer_id"},
            {"relation": "stage.orders", "column": "customer_id"},
            {"relation": "stage.orders", "column": "order_date"},
        ])
    );
    ripple()
        .args(["lineage", "-", "--columns"])
        .write_stdin(sql)
        .assert()
        .success()
        .stdout(predicate::str::contains("revenue  <- stage.orders.amount"));
}

#[test]
fn columns_of_a_table_the_script_creates_expand_a_later_star() {
    let sql = "create temp table s as select id, amount * 2 as amt from raw.o;\n\
               insert into out select * from s;\n\
               insert into out2 select * from raw.o;";
    let doc = lineage_json(&["-", "--columns"], Some(sql));
    let names = |i: usize| -> Vec<String> {
        doc["statements"][i]["columns"]["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names(1), ["id", "amt"]);
    assert_eq!(
        doc["statements"][1]["columns"]["unexpanded_stars"],
        serde_json::json!([])
    );
    // raw.o's columns are not known to the script: flagged, not guessed.
    assert_eq!(names(2), ["*"]);
    assert_eq!(
        doc["statements"][2]["columns"]["unexpanded_stars"],
        serde_json::json!(["raw.o"])
    );
}

#[test]
fn a_schema_settles_unqualified_columns_and_expands_stars() {
    let sql = "insert into mart.t select o.id, amount, * from sales.orders o join sales.refunds r on o.id = r.order_id";
    // Without a schema `amount` could be either table's: both are listed,
    // and the statement says so.
    let bare = lineage_json(&["--columns", "-"], Some(sql));
    let columns = &bare["statements"][0]["columns"];
    assert_eq!(
        columns["ambiguous"]["amount"],
        serde_json::json!(["sales.orders.amount", "sales.refunds.amount"])
    );
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("schema.yml");
    std::fs::write(
        &schema,
        "sales.orders: [id, amount]\nsales.refunds: [order_id, reason]\n",
    )
    .unwrap();
    let with = lineage_json(&["--schema", schema.to_str().unwrap(), "-"], Some(sql));
    let columns = &with["statements"][0]["columns"];
    assert!(columns.get("ambiguous").is_none(), "{columns}");
    let edges: Vec<(String, Vec<String>)> = columns["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let sources = c["sources"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    format!(
                        "{}.{}",
                        r["relation"].as_str().unwrap(),
                        r["column"].as_str().unwrap()
                    )
                })
                .collect();
            (c["name"].as_str().unwrap().to_string(), sources)
        })
        .collect();
    let expected: Vec<(String, Vec<String>)> = [
        ("id", "sales.orders.id"),
        ("amount", "sales.orders.amount"),
        ("id", "sales.orders.id"),
        ("amount", "sales.orders.amount"),
        ("order_id", "sales.refunds.order_id"),
        ("reason", "sales.refunds.reason"),
    ]
    .iter()
    .map(|(n, s)| (n.to_string(), vec![s.to_string()]))
    .collect();
    assert_eq!(edges, expected);
    // The text report names the ambiguity and the way out.
    let text = ripple()
        .args(["lineage", "--columns", "-"])
        .write_stdin(sql)
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("amount is ambiguous: it could be sales.orders.amount or sales.refunds.amount (give --schema to settle it)"),
        "{text}"
    );
    // A schema file that is not one says where.
    std::fs::write(&schema, "sales.orders: {id: int}\n").unwrap();
    ripple()
        .args(["lineage", "--schema", schema.to_str().unwrap(), "-"])
        .write_stdin(sql)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "schema.yml:0:0: the columns of `sales.orders` must be a list",
        ));
}
