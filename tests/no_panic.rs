//! Hostile input never panics the lineage extractor: arbitrary bytes and
//! token soups built from SQL's own vocabulary, in every dialect.

use proptest::prelude::*;
use ripple::sql::{SqlDialect, script_lineage, script_semantics};

/// Pieces that exercise the splitter, tokenizer and parser together:
/// keywords, names, quotes that may not close, comments, nesting.
const VOCABULARY: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "JOIN",
    "LEFT",
    "ON",
    "USING",
    "WITH",
    "RECURSIVE",
    "AS",
    "INSERT",
    "INTO",
    "OVERWRITE",
    "TABLE",
    "PARTITION",
    "VALUES",
    "UPDATE",
    "SET",
    "DELETE",
    "MERGE",
    "WHEN",
    "MATCHED",
    "THEN",
    "CREATE",
    "OR",
    "REPLACE",
    "VIEW",
    "TEMP",
    "UNION",
    "ALL",
    "EXCEPT",
    "LATERAL",
    "UNNEST",
    "EXISTS",
    "IN",
    "CASE",
    "END",
    "BEGIN",
    "COMMIT",
    "DROP",
    "TRUNCATE",
    "USE",
    "GROUP",
    "BY",
    "HAVING",
    "QUALIFY",
    "OVER",
    "TOP",
    "LIMIT",
    "a",
    "b.c",
    "d.e.f",
    "#tmp",
    "[x]",
    "`p.d.t`",
    "\"Q\"",
    "@stage",
    "$1",
    "$$",
    "$tag$",
    "(",
    ")",
    ",",
    ";",
    ";",
    ".",
    "*",
    "=",
    "+",
    "-",
    "'",
    "'str'",
    "\"",
    "`",
    "--",
    "/*",
    "*/",
    "\n",
    "1",
    "2.5",
    "::",
    ":",
    "=>",
    "[",
    "]",
    "{",
    "}",
    "\\",
    "E'",
    "N'x'",
];

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(VOCABULARY), 0..80).prop_map(|words| words.join(" "))
}

fn dialect() -> impl Strategy<Value = SqlDialect> {
    prop::sample::select(
        SqlDialect::ALIASES
            .iter()
            .map(|(_, d)| *d)
            .collect::<Vec<_>>(),
    )
}

proptest! {
    // 512 cases per property by default; PROPTEST_CASES=N for a longer hunt.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(512),
        ..ProptestConfig::default()
    })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400), d in dialect()) {
        let text = String::from_utf8_lossy(&bytes);
        let lineage = script_lineage(&text, d);
        // Every statement number is accounted for once, analysed or failed.
        let mut seen: Vec<usize> = lineage.statements.iter().map(|s| s.index)
            .chain(lineage.errors.iter().map(|e| e.statement)).collect();
        seen.sort_unstable();
        prop_assert_eq!(seen, (1..=lineage.statements.len() + lineage.errors.len()).collect::<Vec<_>>());
    }

    #[test]
    fn token_soups_never_panic(sql in soup(), d in dialect()) {
        let lineage = script_lineage(&sql, d);
        for e in &lineage.errors {
            prop_assert!(e.line >= 1 && e.column >= 1, "unlocated error {:?} for {:?}", e, sql);
        }
        // Column lineage and canonical text (what `ripple diff` compares)
        // never panic either, and leave table lineage as it was.
        let mut with_columns = script_semantics(&sql, d, &Default::default());
        for s in &mut with_columns.statements {
            prop_assert!(s.canonical.is_some());
            s.columns = None;
            s.canonical = None;
        }
        prop_assert_eq!(with_columns, lineage);
    }

    #[test]
    fn valid_statements_survive_a_broken_neighbour(junk in soup(), d in dialect()) {
        // Whatever comes before it, a well-formed last statement is analysed
        // unless the junk leaves a string, comment or block open around it
        // (`#` starts a line comment in MySQL, Snowflake, BigQuery, Hive).
        let sql = format!("{junk};\ninsert into zz_target select * from zz_source");
        let lineage = script_lineage(&sql, d);
        let ends_clean = !junk.contains(['\'', '"', '`', '$', '[', '{', '\\', '#']) && !junk.contains("/*")
            && !junk.contains("--") && !junk.contains("E'") && !junk.contains("BEGIN")
            && !junk.contains("CASE");
        if ends_clean {
            // Junk can be a valid `USE x` (`USE RECURSIVE`), which rightly
            // qualifies what follows: analysed is what counts.
            prop_assert!(lineage.targets.iter().any(|t| t == "zz_target" || t.ends_with(".zz_target")), "{:?}\n{:?}", sql, lineage);
        }
    }
}

#[path = "support/temp_project.rs"]
mod temp_project;

mod other_readers {
    use super::temp_project::temp_project;
    use proptest::prelude::*;

    /// Python-ish soups: DAG declarations, operators, dependencies, strings
    /// that never close, decorators, deep nesting.
    const PYTHON: &[&str] = &[
        "with",
        "DAG(",
        "dag_id=",
        "'d'",
        "\"x\"",
        ")",
        "as",
        "d:",
        "\n",
        "    ",
        "SQL(",
        "task_id=",
        "sql=",
        "'''",
        "\"\"\"",
        ">>",
        "<<",
        "[",
        "]",
        ",",
        "@dag",
        "@task",
        "@task.sql",
        "def",
        "f():",
        "return",
        "chain(",
        "TaskGroup(",
        "@task_group",
        "g()",
        "tg",
        "task_group=",
        ".partial(",
        ".expand(",
        ".expand_kwargs(",
        "Dataset(",
        "Asset(",
        "'postgres://h/d/s/t'",
        "outlets=",
        "schedule=",
        "|",
        "ExternalTaskSensor(",
        "ExternalTaskMarker(",
        "external_dag_id=",
        "TriggerDagRunOperator(",
        "trigger_dag_id=",
        "DbtTaskGroup(",
        "DbtDag(",
        "render_config=",
        "RenderConfig(",
        "select=",
        "BashOperator(",
        "bash_command=",
        "'dbt run -s x+ --exclude'",
        "for",
        "in",
        "x",
        "=",
        "f'",
        "{",
        "}",
        "#",
        "\\",
        "(((",
        ")))",
        "import",
        "from",
        "Operator(",
        "Sensor(",
        "schedule=",
        "timedelta(hours=",
        "1",
        "None",
    ];

    /// Jinja-ish soups: dbt calls, tags that never close, macros, loops.
    const JINJA: &[&str] = &[
        "{{",
        "}}",
        "{%",
        "%}",
        "{#",
        "#}",
        "ref(",
        "source(",
        "'a'",
        ",",
        ")",
        "config(",
        "x=",
        "1",
        "macro",
        "m(",
        "endmacro",
        "for",
        "in",
        "range(",
        "endfor",
        "if",
        "endif",
        "is_incremental()",
        "this",
        "var(",
        "env_var(",
        "adapter.dispatch(",
        "return(",
        "dbt.",
        "date_trunc(",
        "select",
        "from",
        "\n",
        "'",
        "\"",
        "m()",
        "caller()",
        "call",
        "endcall",
        "set",
        "=",
        "do",
    ];

    fn soup(vocab: &'static [&'static str]) -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(vocab), 0..60).prop_map(|w| w.join(" "))
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(128),
            ..ProptestConfig::default()
        })]

        #[test]
        fn dag_files_never_panic(text in soup(PYTHON)) {
            let dir = temp_project(&[("dags/x.py", &text)]);
            let dags = ripple::ingest::read_dags(dir.path(), &[dir.path().join("dags")], ripple::sql::SqlDialect::Generic);
            let _ = dags.check();
        }

        #[test]
        fn dbt_models_never_panic(text in soup(JINJA), macros in soup(JINJA)) {
            let dir = temp_project(&[("models/m.sql", &text)]);
            std::fs::write(dir.path().join("dbt_project.yml"), "name: p\n").unwrap();
            std::fs::create_dir_all(dir.path().join("macros")).unwrap();
            std::fs::write(dir.path().join("macros/x.sql"), &macros).unwrap();
            let project = ripple::ingest::load_project(dir.path(), &ripple::ingest::LoadOptions::default()).unwrap();
            let _ = ripple::graph::LineageGraph::build(project);
        }
    }
}
