//! Tasks made in shapes beyond a plain statement: comprehensions,
//! `list.append` in a loop, dict literals, ternaries, walruses, lambdas and
//! `try` blocks are read; what cannot be read is an `airflow-dynamic`
//! warning naming the line and column, never a task dropped in silence.
//! BigQuery jobs' SQL (`configuration["query"]["query"]`) is read as `sql=`
//! is. The DAG files under `tests/airflow_dynamic/` are a reviewer's
//! reproducers, each task writing `mart.<x>` from `raw.s`.

use std::path::Path;

use ripple::ingest::read_dags;
use ripple::project::{Dag, Diagnostic, Severity, Task};
use ripple::sql::SqlDialect;

const LOOPS: &str = "tests/airflow_dynamic/af_loops";

/// The DAGs and findings of DAG files written to a fresh project.
fn read(files: &[(&str, &str)]) -> (Vec<Dag>, Vec<Diagnostic>) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = dir.path().join("dags").join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let dags = read_dags(dir.path(), &[dir.path().join("dags")], SqlDialect::Postgres);
    (
        dags.dags.clone(),
        dags.check().into_iter().chain(dags.warnings).collect(),
    )
}

/// One of the reviewer's DAG files, read alone.
fn reviewer(name: &str) -> (Dag, Vec<Diagnostic>) {
    let text = std::fs::read_to_string(Path::new(LOOPS).join("dags").join(name)).unwrap();
    let (mut dags, findings) = read(&[(name, &text)]);
    assert_eq!(dags.len(), 1, "{dags:?}");
    (dags.remove(0), findings)
}

fn task<'a>(dag: &'a Dag, id: &str) -> &'a Task {
    dag.tasks
        .iter()
        .find(|t| t.task_id == id)
        .unwrap_or_else(|| panic!("no task {id} in {:?}", dag.tasks))
}

/// Each task of `ids` reads `raw.s` and writes `mart.<table>`.
fn reads_and_writes(dag: &Dag, expected: &[(&str, &str)]) {
    let mut ids: Vec<&str> = dag.tasks.iter().map(|t| t.task_id.as_str()).collect();
    ids.sort_unstable();
    let mut want: Vec<&str> = expected.iter().map(|(id, _)| *id).collect();
    want.sort_unstable();
    assert_eq!(ids, want, "{:?}", dag.tasks);
    for (id, table) in expected {
        let t = task(dag, id);
        assert_eq!(t.reads, ["raw.s"], "{id}");
        assert_eq!(t.writes, [format!("mart.{table}")], "{id}");
    }
}

/// The `airflow-dynamic` warning at `line:column` (1-based).
fn warning_at(findings: &[Diagnostic], line: u32, column: u32) -> &Diagnostic {
    findings
        .iter()
        .find(|d| d.code == "airflow-dynamic" && d.line == line && d.column == column)
        .unwrap_or_else(|| panic!("no airflow-dynamic at {line}:{column}: {findings:#?}"))
}

const HEAD: &str = "from datetime import datetime\nfrom airflow import DAG\nfrom airflow.decorators import task\nfrom airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator as Op\nwith DAG(dag_id=\"d\", schedule=\"@daily\", start_date=datetime(2026, 1, 1)) as dag:\n";

#[test]
fn a_list_comprehension_over_range_makes_a_task_per_value() {
    let (dag, findings) = reviewer("comp.py");
    assert!(findings.is_empty(), "{findings:#?}");
    reads_and_writes(&dag, &[("c_0", "c0"), ("c_1", "c1"), ("c_2", "c2")]);
}

#[test]
fn a_dict_comprehension_makes_a_task_per_value() {
    let (dag, findings) = reviewer("dictcomp.py");
    assert!(findings.is_empty(), "{findings:#?}");
    reads_and_writes(&dag, &[("dc_0", "dc0"), ("dc_1", "dc1")]);
}

#[test]
fn a_generator_passed_to_list_makes_a_task_per_value() {
    let (dag, findings) = reviewer("gen.py");
    assert!(findings.is_empty(), "{findings:#?}");
    reads_and_writes(&dag, &[("g_0", "g0"), ("g_1", "g1"), ("g_2", "g2")]);
}

#[test]
fn tasks_appended_to_a_list_in_a_for_loop_are_read() {
    let (dag, findings) = reviewer("append.py");
    assert!(findings.is_empty(), "{findings:#?}");
    reads_and_writes(&dag, &[("a_0", "a0"), ("a_1", "a1"), ("a_2", "a2")]);
    // The list then stands for its tasks.
    let (dags, findings) = read(&[(
        "chain.py",
        &format!(
            "{HEAD}    ts = []\n    for t in ['x', 'y']:\n        ts.append(Op(task_id=t, conn_id='w', sql='select 1'))\n    ts += [Op(task_id='z', conn_id='w', sql='select 1')]\n    ts >> Op(task_id='end', conn_id='w', sql='select 1')\n"
        ),
    )]);
    assert!(findings.is_empty(), "{findings:#?}");
    assert_eq!(task(&dags[0], "end").upstream, ["x", "y", "z"]);
}

#[test]
fn a_dict_literal_of_operators_is_read() {
    let (dag, findings) = reviewer("dictlit.py");
    assert!(findings.is_empty(), "{findings:#?}");
    reads_and_writes(&dag, &[("y0", "y0")]);
}

#[test]
fn both_branches_of_a_ternary_are_read() {
    let (dag, findings) = reviewer("tern.py");
    assert!(findings.is_empty(), "{findings:#?}");
    reads_and_writes(&dag, &[("tern", "tern")]);
    // Either branch may run: both are tasks, as both branches of an `if`.
    let (dags, findings) = read(&[(
        "both.py",
        &format!(
            "{HEAD}    t = Op(task_id='full', conn_id='w', sql='insert into mart.full select * from raw.s') if FULL else Op(task_id='inc', conn_id='w', sql='insert into mart.inc select * from raw.s')\n    t >> Op(task_id='end', conn_id='w', sql='select 1')\n"
        ),
    )]);
    assert!(findings.is_empty(), "{findings:#?}");
    assert_eq!(task(&dags[0], "inc").writes, ["mart.inc"]);
    assert_eq!(task(&dags[0], "end").upstream, ["full", "inc"]);
}

#[test]
fn a_walrus_makes_its_task_and_binds_it() {
    let (dag, findings) = reviewer("walrus.py");
    assert!(findings.is_empty(), "{findings:#?}");
    reads_and_writes(&dag, &[("wal", "wal")]);
}

#[test]
fn a_lambda_bound_to_a_name_is_read_at_each_call() {
    let (dag, findings) = reviewer("lambda.py");
    assert!(findings.is_empty(), "{findings:#?}");
    reads_and_writes(&dag, &[("lam", "lam")]);
}

#[test]
fn a_try_block_is_read_like_an_if() {
    let (dag, findings) = reviewer("tryblock.py");
    assert!(findings.is_empty(), "{findings:#?}");
    reads_and_writes(&dag, &[("tryb", "tryb")]);
    // Its handlers, `else` and `finally` too.
    let (dags, findings) = read(&[(
        "handlers.py",
        &format!(
            "{HEAD}    try:\n        import x\n    except ImportError:\n        Op(task_id='h', conn_id='w', sql='insert into mart.h select * from raw.s')\n    else:\n        Op(task_id='e', conn_id='w', sql='insert into mart.e select * from raw.s')\n    finally:\n        Op(task_id='f', conn_id='w', sql='insert into mart.f select * from raw.s')\n"
        ),
    )]);
    assert!(findings.is_empty(), "{findings:#?}");
    reads_and_writes(&dags[0], &[("h", "h"), ("e", "e"), ("f", "f")]);
}

#[test]
fn a_comprehension_over_runtime_values_is_a_warning_at_its_line_and_column() {
    let (dags, findings) = read(&[(
        "runtime.py",
        &format!(
            "{HEAD}    ok = Op(task_id='ok', conn_id='w', sql='select 1')\n    ts = [Op(task_id=f'r_{{t}}', conn_id='w', sql='select 1') for t in get_tables()]\n"
        ),
    )]);
    assert_eq!(dags[0].tasks.len(), 1);
    let w = warning_at(&findings, 7, 10);
    assert!(w.message.contains("comprehension"), "{w}");
    assert_eq!(w.severity, Severity::Warning);
    assert!(
        w.to_string().contains("dags/runtime.py:7:10"),
        "{w}: names file, line and column"
    );
    // Said once: not again for the operator inside it.
    assert_eq!(findings.len(), 1, "{findings:#?}");
}

#[test]
fn a_comprehension_with_an_if_is_a_warning() {
    let (dags, findings) = read(&[(
        "filtered.py",
        &format!(
            "{HEAD}    ts = {{i: Op(task_id=f'f_{{i}}', conn_id='w', sql='select 1') for i in range(3) if i != 1}}\n"
        ),
    )]);
    assert!(dags[0].tasks.is_empty());
    assert!(warning_at(&findings, 6, 10).message.contains("no `if`"));
}

#[test]
fn an_operator_in_a_lambda_passed_on_is_named_at_its_line() {
    let (dags, findings) = read(&[(
        "mapped.py",
        &format!(
            "{HEAD}    ts = list(map(lambda n: Op(task_id=n, conn_id='w', sql='select 1'), ['a', 'b']))\n"
        ),
    )]);
    assert!(dags[0].tasks.is_empty());
    let w = warning_at(&findings, 6, 29);
    assert!(w.message.contains("`Op(...)` is in a lambda"), "{w}");
}

#[test]
fn an_operator_in_a_function_this_file_never_calls_is_named() {
    let (_, findings) = read(&[(
        "helper.py",
        "from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator as Op\ndef make(dag):\n    return Op(task_id='load', conn_id='w', sql='insert into mart.l select * from raw.s', dag=dag)\n",
    )]);
    let w = warning_at(&findings, 3, 12);
    assert!(w.message.contains("function `make`"), "{w}");
}

#[test]
fn an_operator_run_inside_a_task_is_named() {
    let (dags, findings) = read(&[(
        "inner.py",
        &format!(
            "{HEAD}    @task\n    def run():\n        Op(task_id='inner', conn_id='w', sql='insert into mart.i select * from raw.s').execute({{}})\n    run()\n"
        ),
    )]);
    assert_eq!(dags[0].tasks.len(), 1);
    let w = warning_at(&findings, 8, 9);
    assert!(
        w.message.contains("`@task` function `run`") && w.message.contains("inlets"),
        "{w}"
    );
}

#[test]
fn every_operator_call_the_reader_does_not_follow_is_named() {
    // An operator in a class body is named where it is.
    let (_, findings) = read(&[(
        "odd.py",
        &format!(
            "{HEAD}    class K:\n        t = Op(task_id='k', conn_id='w', sql='select 1')\n    make_factory()(Op(task_id='u', conn_id='w', sql='select 1'))\n"
        ),
    )]);
    assert!(warning_at(&findings, 7, 13).message.contains("class `K`"));
    // An unknown callee's arguments are still evaluated, as Python does.
    assert!(!findings.iter().any(|d| d.line == 8), "{findings:#?}");
}

#[test]
fn comprehensions_count_against_the_loop_iteration_bound() {
    let (dags, findings) = read(&[(
        "big.py",
        "from airflow import DAG\nfrom airflow.operators.empty import EmptyOperator\nwith DAG('big') as d:\n    ts = [EmptyOperator(task_id=f'{a}_{b}') for a in range(1000) for b in range(1000)]\n",
    )]);
    // As for loops inside loops: 10,000 reads in all, outer ones counted.
    assert_eq!(dags[0].tasks.len(), 9 * 1000 + 990);
    // One warning, though both levels of the comprehension stop.
    assert_eq!(
        findings
            .iter()
            .filter(|w| w.line == 4 && w.message.contains("loop iterations in one file"))
            .count(),
        1,
        "{findings:#?}"
    );
    // Loops and comprehensions share the bound.
    let (dags, _) = read(&[(
        "shared.py",
        "from airflow import DAG\nfrom airflow.operators.empty import EmptyOperator\nwith DAG('big') as d:\n    for a in range(9):\n        for b in range(1000):\n            EmptyOperator(task_id=f'l{a}_{b}')\n    ts = [EmptyOperator(task_id=f'c{i}') for i in range(1000)]\n",
    )]);
    assert_eq!(dags[0].tasks.len(), 10_000 - 9);
}

#[test]
fn comprehensions_count_against_the_bytes_a_file_builds() {
    let big = "x".repeat(1 << 20);
    let (dags, findings) = read(&[(
        "bytes.py",
        &format!(
            "from airflow import DAG\nfrom airflow.operators.empty import EmptyOperator as E\nS = \"{big}\"\nwith DAG('d') as d:\n    ts = [E(task_id=f\"{{S}}{{i}}\") for i in range(1000)]\n"
        ),
    )]);
    let error = findings
        .iter()
        .find(|d| d.code == "expansion-too-large")
        .unwrap_or_else(|| panic!("{findings:#?}"));
    assert_eq!(error.severity, Severity::Error);
    assert!(dags[0].tasks.len() < 128, "{}", dags[0].tasks.len());
}

#[test]
fn deep_expressions_holding_a_task_are_read_not_a_stack_overflow() {
    let n = 50_000;
    let t = "E(task_id='a')";
    let shapes = [
        format!("x = {}{t}{}", "f(".repeat(n), ")".repeat(n)),
        format!("x = {t}{}", ".a".repeat(n)),
        format!("x = {t}{}", ".m()".repeat(n)),
        format!("x = {}{t}{}", "{'k': ".repeat(n), "}".repeat(n)),
        format!("x = {}{t}{}", "(y := ".repeat(n), ")".repeat(n)),
        format!("x = {}None", format!("{t} if c else ").repeat(2)),
    ];
    for body in shapes {
        let (dags, _) = read(&[(
            "deep.py",
            &format!(
                "from airflow import DAG\nfrom airflow.operators.empty import EmptyOperator as E\nwith DAG('d') as d:\n    {body}\n"
            ),
        )]);
        assert!(!dags[0].tasks.is_empty(), "{}", &body[..30]);
    }
}

#[test]
fn a_bigquery_query_job_s_sql_is_read() {
    let text = std::fs::read_to_string("tests/airflow_dynamic/af_sql/dags/d.py").unwrap();
    let (dags, findings) = read(&[("d.py", &text), ("sql/f.sql", "select 1")]);
    let bq = task(&dags[0], "bq");
    assert_eq!(bq.reads, ["raw.s"]);
    assert_eq!(bq.writes, ["mart.bq"]);
    assert!(!findings.iter().any(|d| d.line == 14), "{findings:#?}");
    // Rendered as `sql=` is (params, macros), and its destination table is
    // what it writes.
    let (dags, findings) = read(&[(
        "templated.py",
        &format!(
            "{HEAD}    BigQueryInsertJobOperator(task_id='t', params={{'src': 'raw.s'}}, configuration={{'query': {{'query': 'select * from {{{{ params.src }}}} where d = \"{{{{ ds }}}}\"', 'destinationTable': {{'projectId': 'p', 'datasetId': 'mart', 'tableId': 'daily$20260101'}}, 'useLegacySql': False}}}})\n"
        ),
    )]);
    assert!(findings.is_empty(), "{findings:#?}");
    let t = task(&dags[0], "t");
    assert_eq!(t.reads, ["raw.s"]);
    assert_eq!(t.writes, ["mart.daily"]);
    assert!(t.sql.as_deref().unwrap().contains("2026-01-01"), "{t:?}");
}

#[test]
fn a_bigquery_job_ripple_cannot_read_is_a_warning_at_its_task() {
    let (dags, findings) = read(&[(
        "bq.py",
        &format!(
            "{HEAD}    a = BigQueryInsertJobOperator(task_id='a', configuration=CONFIG)\n    b = BigQueryInsertJobOperator(task_id='b', configuration={{'query': {{'query': make_sql()}}}})\n    c = BigQueryInsertJobOperator(task_id='c', configuration={{'load': {{'destinationTable': {{}}}}}})\n    d = BigQueryInsertJobOperator(task_id='d', configuration={{'query': {{'query': 'select 1', 'destinationTable': TABLE}}}})\n"
        ),
    )]);
    assert_eq!(dags[0].tasks.len(), 4);
    let at = |line: u32, needle: &str| {
        assert!(
            findings.iter().any(|d| d.code == "airflow-dynamic"
                && d.line == line
                && d.message.contains(needle)),
            "{line} {needle}: {findings:#?}"
        );
    };
    at(6, "`configuration=` is not a literal dict");
    at(7, "`configuration[\"query\"][\"query\"]` is not a literal");
    at(8, "no query job");
    at(9, "`destinationTable` is not a literal");
}

fn ripple(args: &[&str]) -> String {
    let out = assert_cmd::Command::cargo_bin("ripple")
        .unwrap()
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

#[test]
fn the_reviewer_s_dag_folder_is_read_whole_by_the_cli() {
    let check: serde_json::Value = serde_json::from_str(&ripple(&[
        "check",
        "--project",
        LOOPS,
        "--no-cache",
        "--format",
        "json",
    ]))
    .unwrap();
    assert_eq!(check["warnings"], 0, "{check:#}");
    let impact: serde_json::Value = serde_json::from_str(&ripple(&[
        "impact",
        "raw.s",
        "--from",
        "2026-01-10",
        "--to",
        "2026-01-11",
        "--as-of",
        "2026-02-01",
        "--project",
        LOOPS,
        "--no-cache",
        "--format",
        "json",
    ]))
    .unwrap();
    let affected: std::collections::BTreeSet<&str> = impact["datasets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    // Shapes read before (top level, `if`, `for ... t = Op(...)`, a list
    // literal) and every shape read now.
    let mut expected: std::collections::BTreeSet<String> = [
        "z0", "ifb", "l0", "l1", "l2", "x0", "x1", "c0", "c1", "c2", "a0", "a1", "a2", "y0", "g0",
        "g1", "g2", "wal", "tern", "lam", "dc0", "dc1", "tryb",
    ]
    .iter()
    .map(|t| format!("mart.{t}"))
    .collect();
    expected.insert("raw.s".to_string());
    let expected: std::collections::BTreeSet<&str> = expected.iter().map(String::as_str).collect();
    assert_eq!(affected, expected);
    let dags: serde_json::Value = serde_json::from_str(&ripple(&[
        "dags",
        "--project",
        "tests/airflow_dynamic/af_sql",
        "--format",
        "json",
    ]))
    .unwrap();
    let bq = dags["dags"][0]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task_id"] == "bq")
        .unwrap();
    assert_eq!(bq["writes"], serde_json::json!(["mart.bq"]));
}
