//! Bounds on the work hostile input can make ripple do (issue 48, item 5;
//! docs/limits.md): each shape here ran for minutes, filled gigabytes,
//! overflowed a stack or held ripple forever before its bound. Nothing is
//! timed against a clock that could flake: the tests assert what comes
//! back, and sizes that were gigabytes are asserted to be megabytes.

#[path = "support/temp_project.rs"]
mod temp_project;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use temp_project::temp_project;

/// The binary under test: `RIPPLE_BIN` when set (CI points it at the
/// release build), else the one cargo built for the tests.
fn bin() -> PathBuf {
    std::env::var_os("RIPPLE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_ripple")))
}

fn ripple(args: &[&str], project: &Path) -> Output {
    std::process::Command::new(bin())
        .args(args)
        .arg("--project")
        .arg(project)
        .arg("--no-cache")
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const DBT_PROJECT: (&str, &str) = ("dbt_project.yml", "name: p\nversion: '1.0'\nprofile: p\n");

// ---------------------------------------------------------------- pictures

/// `n` models, each reading the one before it and the first: the layered
/// layout of such a chain once needed n²/2 bends (3,000 models: a 225 MB
/// picture of every box, 9.5 s, 1 GB).
fn chain_project(n: usize) -> tempfile::TempDir {
    let mut files = vec![
        (DBT_PROJECT.0.to_string(), DBT_PROJECT.1.to_string()),
        ("models/m0.sql".to_string(), "select 1 as x".to_string()),
    ];
    for i in 1..n {
        files.push((
            format!("models/m{i}.sql"),
            format!(
                "select * from {{{{ ref('m{}') }}}} join {{{{ ref('m0') }}}} using (x)",
                i - 1
            ),
        ));
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    temp_project(&files)
}

#[test]
fn a_graph_picture_draws_at_most_1500_boxes_and_says_what_it_left_out() {
    let dir = chain_project(2_000);
    let out = ripple(&["graph", "--format", "svg"], dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let svg = String::from_utf8(out.stdout).unwrap();
    assert_eq!(svg.matches("<g class=\"rp-node").count(), 1_500);
    assert!(
        svg.contains("500 of 2000 datasets not drawn") && svg.contains("--select"),
        "{}",
        &svg[..2000]
    );
    // 1,500 boxes, their arrows and a bounded number of bends: about 1 MB
    // (it was 2,000 boxes and 95 MB).
    assert!(svg.len() < 4_000_000, "{} bytes", svg.len());
}

// -------------------------------------------------------------------- post

/// A server on a free local port answering every request with `answer`
/// (called with the stream once the request's head is read); its URL.
fn server(answer: fn(&mut std::net::TcpStream)) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/api/v1/lineage", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                answer(&mut stream);
            });
        }
    });
    url
}

/// A byte a second: an answer that never ends in any useful time.
fn trickle(stream: &mut std::net::TcpStream) {
    for b in b"HTTP/1.1 200 OK\r\n\r\n".iter().cycle() {
        if stream.write_all(&[*b]).is_err() {
            return;
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// An error status followed by an endless body.
fn flood(stream: &mut std::net::TcpStream) {
    let _ = stream.write_all(b"HTTP/1.1 503 Busy\r\n\r\n");
    let chunk = vec![b'y'; 64 * 1024];
    while stream.write_all(&chunk).is_ok() {}
}

#[test]
fn a_post_to_a_server_that_trickles_ends_at_its_deadline() {
    let url = server(trickle);
    let endpoint = ripple::post::Endpoint::parse(&url).unwrap();
    let retry = ripple::post::Retry {
        retries: 5,
        pause: Duration::from_millis(10),
        timeout: Duration::from_secs(2),
        deadline: Duration::from_secs(3),
    };
    let started = Instant::now();
    let err = ripple::post::post_events(&endpoint, "{\"a\":1}\n{\"b\":2}\n", retry).unwrap_err();
    // Held forever before: each read waited 30 s for the next byte.
    assert!(started.elapsed() < Duration::from_secs(20));
    let text = err.to_string();
    assert!(
        text.contains("ran out of time") && text.contains("--post-timeout"),
        "{text}"
    );
}

#[test]
fn a_post_answer_is_read_up_to_its_cap() {
    let url = server(flood);
    let endpoint = ripple::post::Endpoint::parse(&url).unwrap();
    let retry = ripple::post::Retry {
        retries: 0,
        pause: Duration::from_millis(10),
        timeout: Duration::from_secs(20),
        deadline: Duration::from_secs(20),
    };
    let started = Instant::now();
    let err = ripple::post::post_events(&endpoint, "{\"a\":1}\n", retry).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(15));
    let text = err.to_string();
    assert!(text.contains("HTTP 503"), "{text}");
    assert!(text.len() < 2_000, "{} bytes", text.len());
}

#[test]
fn post_timeout_bounds_the_command() {
    let url = server(trickle);
    let dir = temp_project(&[DBT_PROJECT, ("models/a.sql", "select 1 as x")]);
    let started = Instant::now();
    let out = ripple(
        &[
            "graph",
            "--format",
            "openlineage",
            "--post",
            &url,
            "--post-timeout",
            "2",
        ],
        dir.path(),
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--post-timeout"), "{}", stderr(&out));
}

// ----------------------------------------------------------- DAG files

fn dag_file(body: &str) -> (Vec<ripple::project::Dag>, Vec<ripple::project::Diagnostic>) {
    let dir = temp_project(&[("dags/d.py", body)]);
    let dags = ripple::ingest::read_dags(
        dir.path(),
        &[dir.path().join("dags")],
        ripple::sql::SqlDialect::Postgres,
    );
    let findings = dags
        .check()
        .into_iter()
        .chain(dags.warnings.clone())
        .collect();
    (dags.dags, findings)
}

const DAG_HEAD: &str = "from airflow import DAG\nfrom airflow.operators.empty import EmptyOperator as E\nwith DAG('d', schedule='@daily') as dag:\n";

#[test]
fn a_cross_product_of_task_lists_is_counted_before_it_is_built() {
    // `[t0..tN] >> [u0..uN]`: a 0.5 MB file once made 144 million
    // dependencies (47 s, 4.4 GB).
    let n = 12_000;
    let list = |p: &str| {
        (0..n)
            .map(|i| format!("E(task_id='{p}{i}')"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let body = format!(
        "{DAG_HEAD}    [{}] >> [{}]\n    a = E(task_id='a')\n    b = E(task_id='b')\n    a >> b\n",
        list("t"),
        list("u")
    );
    let (dags, findings) = dag_file(&body);
    let error = findings
        .iter()
        .find(|d| d.code == "expansion-too-large")
        .unwrap_or_else(|| panic!("{findings:#?}"));
    let text = error.to_string();
    assert!(
        text.contains("dags/d.py:4:5")
            && text.contains("144000000 dependencies")
            && text.contains("EmptyOperator"),
        "{text}"
    );
    // The tasks are there, the product is not, and the rest of the file
    // is read.
    let tasks = &dags[0].tasks;
    assert_eq!(tasks.len(), 2 * n + 2);
    assert!(tasks.iter().take(2 * n).all(|t| t.upstream.is_empty()));
    assert_eq!(tasks.last().unwrap().upstream, ["a"]);
}

#[test]
fn loops_and_f_strings_count_the_bytes_they_build() {
    // Task ids made in loops from a 1 MB constant: 10,000 ids of 1 MB
    // each once took 12 s and 6 GB before memory ran out.
    let big = "x".repeat(1_000_000);
    let body = format!(
        "from airflow import DAG\nfrom airflow.operators.empty import EmptyOperator as E\nS = \"{big}\"\nwith DAG('d', schedule='@daily') as dag:\n    for i in range(1000):\n        for j in range(10):\n            E(task_id=f\"{{S}}{{i}}_{{j}}\")\n"
    );
    let (dags, findings) = dag_file(&body);
    let error = findings
        .iter()
        .find(|d| d.code == "expansion-too-large")
        .unwrap_or_else(|| panic!("{findings:#?}"));
    assert!(error.to_string().contains("dags/d.py:7:"), "{error}");
    // What was read before the bytes ran out is kept; no other finding
    // repeats the story.
    assert!(!dags[0].tasks.is_empty() && dags[0].tasks.len() < 200);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    // f-strings that repeat a long string: counted piece by piece.
    let body = format!(
        "{DAG_HEAD}    S = \"{}\"\n    E(task_id=f\"{}\")\n    E(task_id='after')\n",
        "y".repeat(100_000),
        "{S}".repeat(2_000)
    );
    let (dags, findings) = dag_file(&body);
    assert!(
        findings.iter().any(|d| d.code == "expansion-too-large"),
        "{findings:#?}"
    );
    assert!(dags[0].tasks.is_empty());
}

#[test]
fn statements_read_again_and_again_are_counted_too() {
    // Review round 24: a loop of 10,000 iterations over a body of 20,000
    // `x = 1` lines built nothing, so no byte bound fired: 22 s (100,000
    // lines: past 120 s). Each statement read now counts.
    let lines: String = (0..20_000)
        .map(|k| format!("            x{k} = 1\n"))
        .collect();
    let body = format!(
        "{DAG_HEAD}    E(task_id='first')\n    for a in range(10):\n        for i in range(1000):\n{lines}    E(task_id='after')\n"
    );
    let (dags, findings) = dag_file(&body);
    let error = findings
        .iter()
        .find(|d| d.code == "expansion-too-large")
        .unwrap_or_else(|| panic!("{findings:#?}"));
    assert!(error.message.contains("each statement read"), "{error}");
    // What was read before is kept.
    assert_eq!(dags[0].tasks[0].task_id, "first");
}

#[test]
fn a_graph_of_more_edges_than_ripple_builds_is_refused_not_aborted() {
    // Review round 25: 3,200 models each reading all the ones before (5
    // million edges) aborted on memory in the graph's build. Here 201 jobs
    // read 5,000 tables each: past the million edges, refused with what to
    // do, exit 2.
    let from: String = (0..5_000)
        .map(|k| format!("s.t{k}"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut files: Vec<(String, String)> = (0..201)
        .map(|j| {
            (
                format!("jobs/j{j}.sql"),
                format!("insert into mart.m{j} select 1 from {from}"),
            )
        })
        .collect();
    files.push(("ripple.yml".to_string(), "sql: [jobs]\n".to_string()));
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let dir = temp_project(&files);
    let out = ripple(&["graph", "--format", "json"], dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("lineage edges"), "{}", stderr(&out));
}

#[test]
fn a_task_group_function_called_many_times_reads_in_linear_time() {
    // Each call once copied the function's body and searched group ids
    // from `__1`: 9,000 calls were quadratic.
    let body = format!(
        "from airflow import DAG\nfrom airflow.decorators import task_group, task\nfrom airflow.operators.empty import EmptyOperator as E\n@task_group\ndef g():\n    E(task_id='a', doc='{}') >> E(task_id='b')\n@task\ndef f():\n    pass\nwith DAG('d', schedule='@daily') as dag:\n    for i in range(900):\n        for j in range(10):\n            g()\n            f()\n",
        "d".repeat(100_000)
    );
    let started = Instant::now();
    let (dags, findings) = dag_file(&body);
    // 5 s in a release build before (and 900 MB of copies of the body),
    // 0.2 s in a debug build after.
    assert!(started.elapsed() < Duration::from_secs(20));
    let tasks = &dags[0].tasks;
    assert!(
        tasks.iter().any(|t| t.task_id == "g__8999.b"),
        "{findings:#?}"
    );
    assert!(tasks.iter().any(|t| t.task_id == "f__8999"));
}

// ----------------------------------------------------------------- Jinja

/// `ripple check --format json` on `project` with the address space limited
/// to `kib` (what a hostile model once exceeded by gigabytes); its
/// findings, after asserting that it ended by itself.
fn check_limited(project: &Path, kib: u64) -> Vec<serde_json::Value> {
    check_timed(project, kib, None)
}

fn finding_for<'a>(findings: &'a [serde_json::Value], file: &str) -> Option<&'a serde_json::Value> {
    findings
        .iter()
        .find(|f| f["file"] == file && f["code"] == "render-error")
}

#[test]
fn what_a_model_prints_is_paid_for_before_it_is_built() {
    // A 10 MB string repeated 400 times is a cheap list; printing, joining,
    // comparing or converting it once built 4 GB before the engine charged
    // for it (`([s]*40)|join` in 90 bytes).
    let shapes = [
        "{{ l|join }}",
        "{{ l }}",
        "{{ l ~ '' }}",
        "{{ l|string }}",
        "{{ l|tojson }}",
        "{{ l|pprint }}",
        "{{ l|upper }}",
        "{{ l|replace('x', 'y') }}",
        "{{ '%s'|format(l) }}",
        "{{ ''.join(l) }}",
        "{% if l in 'abc' %}{% endif %}",
        "{% if l not in 'abc' %}{% endif %}",
        "{% if 1 < l in 'abc' %}{% endif %}",
        "{{ ref(l) }}",
        "{{ config(x=l) }}",
        "{{ adapter.quote(l) }}",
        "{{ l is startingwith('x') }}",
        "{% set ns = namespace(l=l) %}{{ debug() }}{{ ns }}",
        "{{ ('a\\n' * 1000000)|indent(1000000) }}",
    ];
    let mut files: Vec<(String, String)> = vec![
        (DBT_PROJECT.0.into(), DBT_PROJECT.1.into()),
        ("models/ok.sql".into(), "select 1 as x".into()),
    ];
    for (i, shape) in shapes.iter().enumerate() {
        files.push((
            format!("models/bomb{i}.sql"),
            format!(
                "{{% set s = 'x' * 10000000 %}}{{% set l = [s] * 400 %}}select 1 as y -- {shape}"
            ),
        ));
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let dir = temp_project(&files);
    let findings = check_limited(dir.path(), 3_000_000);
    for (i, shape) in shapes.iter().enumerate() {
        let file = format!("models/bomb{i}.sql");
        let f = finding_for(&findings, &file)
            .unwrap_or_else(|| panic!("{shape}: no render error in {findings:#?}"));
        let message = f["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("bytes") || message.contains("fuel"),
            "{shape}: {message}"
        );
    }
    assert!(finding_for(&findings, "models/ok.sql").is_none());
}

#[test]
fn widths_separators_and_indents_are_measured_before_they_are_built() {
    // Each aborted the process (SIGABRT, nothing reported) under a 4 GB
    // address-space limit: a width, a precision, a separator or an indent
    // asks for gigabytes that no input of the call holds. The same width in
    // a macro, a `dbt_project.yml` config value and a source's schema.
    const WIDTH: &str = "{{ '{:>1000000000}'.format(1) }}";
    let shapes = [
        WIDTH,
        "{{ '{:^3000000000}'.format('x') }}",
        "{{ '{:.1000000000f}'.format(1.0) }}",
        "{{ ('x' * 10).join('y' * 100000000) | length }}",
        "{{ ('y' * 100000000)|join('x' * 10) }}",
        "{{ {'a': [1, 2, 3]} | tojson(indent=1000000000) }}",
        "{{ [[[[1]]]] | tojson(1000000000) }}",
        "{{ '{0[\u{e9}]}'.format([1]) }}",
    ];
    let mut files: Vec<(String, String)> = vec![
        (
            DBT_PROJECT.0.into(),
            format!(
                "{}models:\n  p:\n    aliased:\n      +alias: \"{WIDTH}\"\n",
                DBT_PROJECT.1
            ),
        ),
        (
            "models/ok.sql".into(),
            "select 1 as x from {{ source('raw', 'orders') }}".into(),
        ),
        ("models/aliased/a.sql".into(), "select 1 as x".into()),
        (
            "models/src.yml".into(),
            format!(
                "version: 2\nsources:\n  - name: raw\n    schema: \"{WIDTH}\"\n    tables:\n      - name: orders\n"
            ),
        ),
        (
            "macros/pad.sql".into(),
            format!("{{% macro pad() %}}{WIDTH}{{% endmacro %}}"),
        ),
        ("models/padded.sql".into(), "select {{ pad() }} as x".into()),
    ];
    for (i, shape) in shapes.iter().enumerate() {
        files.push((
            format!("models/bomb{i}.sql"),
            format!("select 1 as y -- {shape}"),
        ));
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let dir = temp_project(&files);
    let findings = check_limited(dir.path(), 3_000_000);
    let says = |f: &serde_json::Value| {
        let message = f["message"].as_str().unwrap_or_default().to_string();
        assert!(
            message.contains("would print more than")
                || message.contains("fuel")
                || message.contains("not ASCII"),
            "{message}"
        );
    };
    for (i, shape) in shapes.iter().enumerate() {
        let f = finding_for(&findings, &format!("models/bomb{i}.sql"))
            .unwrap_or_else(|| panic!("{shape}: no render error in {findings:#?}"));
        says(f);
    }
    for file in ["models/padded.sql", "models/src.yml"] {
        says(finding_for(&findings, file).unwrap_or_else(|| panic!("{file}: {findings:#?}")));
    }
    let config = findings
        .iter()
        .find(|f| {
            f["code"] == "render-error"
                && f["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("config value"))
        })
        .unwrap_or_else(|| panic!("no config finding in {findings:#?}"));
    says(config);
    assert!(finding_for(&findings, "models/ok.sql").is_none());
    // Its alias kept as written names no table: the model says so.
    let aliased = finding_for(&findings, "models/aliased/a.sql")
        .unwrap_or_else(|| panic!("aliased: {findings:#?}"));
    assert!(
        aliased["message"]
            .as_str()
            .is_some_and(|m| m.contains("did not render to a name")),
        "{aliased}"
    );

    // An Airflow task's SQL template: its filters are guarded too.
    let body = format!(
        "{DAG_HEAD}    SQL(task_id='bomb', sql=\"select '{{{{ {{'a': [1, 2]}}|tojson(indent=1000000000) }}}}'\")\n    SQL(task_id='ok', sql='insert into s.t select 1')\n"
    )
    .replace(
        "from airflow.operators.empty import EmptyOperator as E",
        "from airflow.operators.empty import EmptyOperator as E\nfrom airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator as SQL",
    );
    let dir = temp_project(&[("dags/d.py", &body), ("ripple.yml", "dags: [dags]\n")]);
    check_limited(dir.path(), 3_000_000);
}

#[test]
fn chained_lookups_and_filters_render_on_a_stack_sized_for_them() {
    // 10,000 links in a 20 KB model overflowed a worker thread's stack and
    // aborted the process as soon as the project had a second model.
    let dir = temp_project(&[
        DBT_PROJECT,
        (
            "models/lookups.sql",
            &format!("select {{{{ x{} }}}} as c", ".a".repeat(10_000)),
        ),
        (
            "models/filters.sql",
            &format!("select {{{{ 1{} }}}} as c", "|lower".repeat(10_000)),
        ),
        (
            "models/sums.sql",
            &format!("select {{{{ 1{} }}}} as c", "+1".repeat(10_000)),
        ),
        (
            "models/nots.sql",
            &format!("select {{{{ {}1 }}}} as c", "not ".repeat(10_000)),
        ),
        // A macro file is parsed once for the project, on the main thread.
        (
            "macros/deep.sql",
            &format!(
                "{{% macro deep() %}}{{{{ x{} ~ 'y' }}}}{{% endmacro %}}",
                ".a".repeat(10_000)
            ),
        ),
        ("models/calls.sql", "select {{ deep() }} as c"),
        ("models/ok.sql", "select 1 as x"),
    ]);
    let findings = check_limited(dir.path(), 8_000_000);
    assert!(finding_for(&findings, "models/ok.sql").is_none());
    for model in ["lookups", "filters", "calls"] {
        assert!(
            finding_for(&findings, &format!("models/{model}.sql")).is_none(),
            "{model}: {findings:#?}"
        );
    }
    // 10,000 operators in one expression pass the chain bound: named, not
    // compiled (see `what_a_template_makes_is_bounded_and_its_errors_are_short`).
    for model in ["sums", "nots"] {
        let f = finding_for(&findings, &format!("models/{model}.sql"))
            .unwrap_or_else(|| panic!("{model}: {findings:#?}"));
        assert!(
            f["message"]
                .as_str()
                .unwrap_or_default()
                .contains("chains more than"),
            "{model}: {f}"
        );
    }
}

#[test]
fn values_that_hold_themselves_or_nest_without_end_are_refused() {
    // Each aborted the process: hashing, printing or dropping recursed
    // once per level, and a namespace holding itself without end.
    let models = [
        "{% set ns = namespace() %}{% set ns.a = ns %}{% set d = {ns: 1} %}",
        "{% set ns = namespace() %}{% set ns.a = ns %}{{ ns }}",
        "{% set xs = [] %}{% do xs.append(xs) %}{{ xs }}",
        "{% set ns = namespace(l=[]) %}{% for i in range(100000) %}{% for j in range(5) %}{% set ns.l = [ns.l] %}{% endfor %}{% endfor %}",
        "{% set xs = [] %}{% for i in range(100000) %}{% do xs.append([xs.pop() if xs else 1]) %}{% endfor %}",
    ];
    let mut files: Vec<(String, String)> = vec![
        (DBT_PROJECT.0.into(), DBT_PROJECT.1.into()),
        ("models/ok.sql".into(), "select 1 as x".into()),
    ];
    for (i, m) in models.iter().enumerate() {
        files.push((format!("models/v{i}.sql"), format!("{m}select 1 as y")));
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let dir = temp_project(&files);
    let findings = check_limited(dir.path(), 8_000_000);
    for (i, m) in models.iter().enumerate() {
        assert!(
            finding_for(&findings, &format!("models/v{i}.sql")).is_some(),
            "{m}: {findings:#?}"
        );
    }
    assert!(finding_for(&findings, "models/ok.sql").is_none());
}

#[test]
fn a_namespace_value_sharing_its_parts_is_paid_per_path() {
    // `ns.l + ns.l` shares both halves, so each assignment's check walked
    // twice the last: a 124-byte model doubled its time per round (30
    // rounds: hours). A list built item by item stays free.
    let files = [
        DBT_PROJECT,
        (
            "models/doubling.sql",
            "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}{% endfor %}select 1 as y",
        ),
        (
            "models/appending.sql",
            "{% set ns = namespace(l=[]) %}{% for i in range(1000) %}{% set ns.l = ns.l + [i] %}{% endfor %}select {{ ns.l|length }} as n",
        ),
    ];
    let dir = temp_project(&files);
    let findings = check_limited(dir.path(), 8_000_000);
    let f = finding_for(&findings, "models/doubling.sql")
        .unwrap_or_else(|| panic!("no render error: {findings:#?}"));
    assert!(
        f["message"].as_str().unwrap_or_default().contains("fuel"),
        "{f}"
    );
    assert!(
        finding_for(&findings, "models/appending.sql").is_none(),
        "{findings:#?}"
    );
}

/// `check_limited` with the CPU time limited too (`ulimit -t`) where
/// given: what once ran for minutes is killed, and the test fails, instead
/// of hanging.
/// `ripple ARGS --no-cache --project PROJECT` under an address-space limit
/// of `kib` and, if given, a CPU-time limit.
fn run_timed(project: &Path, args: &[&str], kib: u64, cpu_secs: Option<u64>) -> Output {
    let cpu = cpu_secs.map_or_else(String::new, |s| format!("ulimit -t {s}; "));
    std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {kib}; {cpu}exec \"$0\" \"$@\" --no-cache --project \"{}\"",
            project.display()
        ))
        .arg(bin())
        .args(args)
        .output()
        .unwrap()
}

fn check_timed(project: &Path, kib: u64, cpu_secs: Option<u64>) -> Vec<serde_json::Value> {
    let out = run_timed(project, &["check", "--format", "json"], kib, cpu_secs);
    // Findings (exit 1 or 2), never a signal or a panic.
    assert!(
        matches!(out.status.code(), Some(0..=2)),
        "{:?} (killed past {cpu_secs:?} s of CPU?): {}",
        out.status,
        stderr(&out)
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    doc["findings"].as_array().cloned().unwrap_or_default()
}

#[test]
fn reading_a_value_made_once_is_paid_for_on_every_read() {
    // Each read below walks a 30 MB string or 500,000 items and was charged
    // one step or none: 100,000 turns of a loop ran for minutes (a 93-byte
    // model). Now each read pays for what it walks, and the fuel ends it.
    let setup = "{% set s = 'x' * 30000000 %}{% set t = 'x' * 30000000 %}{% set b = range(100000)|list %}{% set a = (b + b + b + b + b)|list %}{% set lazy = b + b + b + b + b %}{% set n = 29999999 %}";
    let reads = [
        "s[-1] == 'y'",
        "s[n] == 'y'",
        "s == t",
        "s < t",
        "s[1:2] == 'y'",
        "s is lower",
        "modules.re.search('y', s)",
        "(a + [2])[-1] == 3",
        "a[1:][-1] == 3",
        "lazy[-1] == 3",
        "a[n // 100:][0] == 3",
        "a|lower == 'x'",
        "7 in a",
        "s[29999999] == 'y'",
        "s is sameas t",
        "a.x() == 1",
        "s.startswith('y')",
    ];
    let mut files: Vec<(String, String)> = vec![
        (DBT_PROJECT.0.into(), DBT_PROJECT.1.into()),
        (
            "models/ok.sql".into(),
            // A slice read in a loop is made once: each read is one step.
            "{% set b = range(100000)|list %}{% set a = (b + b + b + b + b)|list %}{% set c = a[499999:] %}{% for i in range(100000) %}{% if c[0] == 3 %}{% endif %}{% endfor %}select {{ a[-1] }} as x".into(),
        ),
    ];
    for (i, read) in reads.iter().enumerate() {
        files.push((
            format!("models/read{i}.sql"),
            format!("{setup}{{% for i in range(100000) %}}{{% if {read} %}}{{% endif %}}{{% endfor %}}select 1 as y"),
        ));
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let dir = temp_project(&files);
    let findings = check_timed(dir.path(), 8_000_000, Some(60));
    for (i, read) in reads.iter().enumerate() {
        let f = finding_for(&findings, &format!("models/read{i}.sql"))
            .unwrap_or_else(|| panic!("{read}: no render error in {findings:#?}"));
        let message = f["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("fuel") || message.contains("bytes"),
            "{read}: {message}"
        );
    }
    assert!(
        finding_for(&findings, "models/ok.sql").is_none(),
        "{findings:#?}"
    );
}

#[test]
fn what_a_template_makes_is_bounded_and_its_errors_are_short() {
    // Each model made tens of millions of values (gigabytes: killed under
    // 4 GB), grew a dict or a list quadratically (minutes), or failed
    // with an error quoting a 60 MB value. Each ends in seconds now, with
    // an error that says why and quotes at most a little of the value.
    let stopped = [
        "{% set s = 'x' * 30000000 %}{{ zip(s, s)|length }}",
        "{% set s = 'x' * 60000000 %}{{ s.split('x')|length }}",
        "{% set s = '\\n' * 60000000 %}{{ s.splitlines()|length }}",
        "{% set s = 'x ' * 30000000 %}{{ s.split()|length }}",
        "{% set a = [[0] * 10] * 200000 %}{{ (a|sum(start=[]))|length }}",
        "{% set a = ['x' * 1000] * 100000 %}{{ (a|sum(start=''))|length }}",
        "{{ 'x'|center(1000000000000) }}",
        "{% set d = {} %}{% for i in range(2000000) %}{% do d.update({i: i}) %}{% endfor %}",
        "{% set s = 'x' * 60000000 %}{{ modules.datetime.date.fromisoformat(s) }}",
        "{% set s = 'x' * 60000000 %}{{ modules.datetime.datetime.strptime(s, '%Y') }}",
        "{% set s = 'x' * 60000000 %}{{ exceptions.raise_compiler_error(s) }}",
    ];
    let mut files_long: Vec<(String, String)> = Vec::new();
    // An expression of 30,000 `~` or 20,000 `and`: the engine compiles it
    // in time growing with the square (9 s, 45 s). Refused at once.
    let long = [
        format!("{{{{ {} }}}}", vec!["1"; 30_000].join("~")),
        format!("{{{{ {} }}}}", vec!["(x == y)"; 20_000].join(" and ")),
    ];
    for (i, m) in long.iter().enumerate() {
        files_long.push((format!("models/long{i}.sql"), format!("{m}select 1 as y")));
    }
    // And these are quick and right: each names the table it reads.
    let made = [
        (
            "{% set a = [[0] * 100] * 1000 %}{{ (a|sum(start=[]))|length }}",
            "100000",
        ),
        (
            "{% set d = {} %}{% for i in range(100000) %}{% do d.update({i: i}) %}{% endfor %}{{ d|length }}",
            "100000",
        ),
        (
            "{% set d = {} %}{% for i in range(20000) %}{% do d.setdefault(i, i * 2) %}{% endfor %}{{ d.get(19999) }}",
            "39998",
        ),
        (
            "{% set d = {} %}{% do d.update(zip(range(100000)|list, range(100000)|list)) %}{{ d|length }}",
            "100000",
        ),
        (
            "{% set d = {'b': 1, 'a': 2} %}{% do d.update([('c', 3), ('b', 4)]) %}{% do d.pop('a') %}{{ d|join('_') }}_{{ d.b }}",
            "b_c_4",
        ),
        (
            "{{ zip([1, 2, 3], 'ab')|map('join', '')|join('_') }}",
            "1a_2b",
        ),
        ("{{ [[1], [2, 3]]|sum(start=[0])|join('_') }}", "0_1_2_3"),
        ("{{ ('a_b' ~ ('c'|upper) ~ 'd') }}", "a_bCd"),
    ];
    let mut files: Vec<(String, String)> = vec![(DBT_PROJECT.0.into(), DBT_PROJECT.1.into())];
    files.append(&mut files_long);
    for (i, m) in stopped.iter().enumerate() {
        files.push((format!("models/stop{i}.sql"), format!("{m}select 1 as y")));
    }
    for (i, (m, name)) in made.iter().enumerate() {
        files.push((
            format!("models/made{i}.sql"),
            format!(
                "{{% set r %}}{m}{{% endset %}}select 1 as y from {{{{ ref('t_' ~ r|trim) }}}}"
            ),
        ));
        files.push((format!("models/t_{name}.sql"), "select 1 as y".into()));
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let dir = temp_project(&files);
    let findings = check_timed(dir.path(), 4_000_000, Some(120));
    for (i, m) in stopped.iter().enumerate() {
        let f = finding_for(&findings, &format!("models/stop{i}.sql"))
            .unwrap_or_else(|| panic!("{m}: no render error in {findings:#?}"));
        let message = f["message"].as_str().unwrap_or_default();
        assert!(message.len() < 2_000, "{m}: {} bytes", message.len());
    }
    for i in 0..long.len() {
        let f = finding_for(&findings, &format!("models/long{i}.sql"))
            .unwrap_or_else(|| panic!("long{i}: no render error in {findings:#?}"));
        let message = f["message"].as_str().unwrap_or_default();
        assert!(message.contains("chains more than"), "long{i}: {message}");
    }
    let graph = ripple(&["graph", "--format", "json"], dir.path());
    let graph_err = stderr(&graph);
    let graph = String::from_utf8_lossy(&graph.stdout);
    for (i, (m, name)) in made.iter().enumerate() {
        assert!(
            finding_for(&findings, &format!("models/made{i}.sql")).is_none(),
            "{m}: {findings:#?}"
        );
        let edge = format!("\"from\": \"model.t_{name}\",\n      \"to\": \"model.made{i}\"");
        assert!(
            graph.contains(&edge),
            "{m}: no t_{name} read: {graph} {graph_err}"
        );
    }
}

#[test]
fn a_config_value_is_rendered_once_however_many_models_it_applies_to() {
    // A slow value in dbt_project.yml, or a YAML anchor naming 300 source
    // tables, was rendered again with fresh fuel for each model or table:
    // 500 models took minutes. It is rendered once now.
    let slow = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}x";
    let project = format!(
        "name: p\nversion: '1.0'\nprofile: p\nmodels:\n  p:\n    +alias: \"{slow}\"\n    +schema: \"{slow}\"\n    +tags: \"{slow}\"\n"
    );
    let tables: String = (0..300)
        .map(|i| format!("      - {{name: t{i}, identifier: *j}}\n"))
        .collect();
    let sources = format!(
        "version: 2\nsources:\n  - name: s\n    schema: &j \"{slow}\"\n    tables:\n{tables}"
    );
    let mut files: Vec<(String, String)> = vec![
        ("dbt_project.yml".into(), project),
        ("models/src.yml".into(), sources),
        (
            "models/m.sql".into(),
            "select 1 as x from {{ source('s', 't1') }}".into(),
        ),
    ];
    for i in 0..300 {
        files.push((format!("models/m{i}.sql"), "select 1 as x".into()));
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let dir = temp_project(&files);
    let findings = check_timed(dir.path(), 4_000_000, Some(60));
    // Each model still says its name did not render.
    let f = finding_for(&findings, "models/m299.sql").unwrap_or_else(|| panic!("{findings:#?}"));
    assert!(
        f["message"]
            .as_str()
            .unwrap_or_default()
            .contains("`alias`"),
        "{f}"
    );
}

#[test]
fn many_edges_from_little_text_stay_linear() {
    // 600 models each reading 600 others through a loop (360,000 edges from
    // 150 KB): each edge copied its model's whole time inference (out of
    // memory at 2,000), and column lineage copied what 600 tables listed
    // with commas see, once per table (an HTML impact took 25 s at 1,200).
    let n = 600;
    let mut files: Vec<(String, String)> = vec![(DBT_PROJECT.0.into(), DBT_PROJECT.1.into())];
    for i in 0..n {
        files.push((format!("models/a{i}.sql"), "select 1 as x".into()));
        files.push((
            format!("models/b{i}.sql"),
            format!("select 1 as x from {{% for i in range({n}) %}}{{{{ ref('a' ~ i) }}}}{{{{ ',' if not loop.last }}}}{{% endfor %}}"),
        ));
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let dir = temp_project(&files);
    let out = run_timed(
        dir.path(),
        &[
            "impact",
            "a0",
            "--from",
            "2026-01-01",
            "--to",
            "2026-01-02",
            "--format",
            "html",
        ],
        4_000_000,
        Some(60),
    );
    assert!(out.status.success(), "{:?}: {}", out.status, stderr(&out));
    let html = String::from_utf8_lossy(&out.stdout);
    assert!(html.contains("b599"), "every reader of a0 is affected");
}

#[test]
fn a_plans_sql_is_bounded_before_it_is_rendered() {
    // A 300 KB Airflow template rendered and parsed once a day: a year took
    // two minutes to plan (review round 20). Counted before rendering now
    // (here 100 KB over three years).
    let values = vec!["1"; 50_000].join(",");
    let sql = format!(
        "delete from mart.big where d = '{{{{ ds }}}}'; insert into mart.big select d, x from raw.orders where d = '{{{{ ds }}}}' and x in ({values});\n"
    );
    let dir = temp_project(&[
        ("dags/sql/big.sql", &sql),
        (
            "dags/d.py",
            "from airflow import DAG\nfrom airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator as Op\nwith DAG(dag_id='big', schedule='@daily') as dag:\n    Op(task_id='load', conn_id='w', sql='sql/big.sql')\n",
        ),
        (
            "ripple.yml",
            "dialect: postgres\ndags: [dags]\ndatasets:\n  raw.orders: { grain: day, start: 1900-01-01, partition_column: d }\n  mart.big: { grain: day, partition_column: d }\nbackfill:\n  batch: { day: 1 }\n",
        ),
    ]);
    let out = run_timed(
        dir.path(),
        &[
            "plan",
            "raw.orders",
            "--from",
            "2000-01-01",
            "--to",
            "2002-12-31",
            "--format",
            "text",
        ],
        4_000_000,
        Some(30),
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("more than 64 MiB of SQL") && stderr(&out).contains("mart.big"),
        "{}",
        stderr(&out)
    );
    // A month is planned.
    let out = run_timed(
        dir.path(),
        &[
            "plan",
            "raw.orders",
            "--from",
            "2000-01-01",
            "--to",
            "2000-01-03",
            "--format",
            "text",
        ],
        4_000_000,
        Some(60),
    );
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_renamed_wide_model_is_paired_in_linear_time() {
    // 30,000 columns renamed: each removed one looked through every added
    // one (45 s; 50,000: past 120 s). They are paired by what they compute now.
    let dir = tempfile::tempdir().unwrap();
    for (side, c) in [("base", "c"), ("head", "d")] {
        let p = dir.path().join(side);
        std::fs::create_dir_all(p.join("models")).unwrap();
        std::fs::write(p.join("dbt_project.yml"), DBT_PROJECT.1).unwrap();
        std::fs::write(
            p.join("models/m.sql"),
            format!("select {{% for i in range(30000) %}}a.x{{{{ i }}}} as {c}{{{{ i }}}}, {{% endfor %}}1 as z from t a"),
        )
        .unwrap();
    }
    let (base, head) = (dir.path().join("base"), dir.path().join("head"));
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4000000; ulimit -t 60; exec \"$0\" diff --base-dir \"$1\" --head-dir \"$2\" --format json --fail-on none")
        .arg(bin())
        .arg(&base)
        .arg(&head)
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}: {}", out.status, stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("\"c29999 → d29999\""),
        "{}",
        &text[..text.len().min(2000)]
    );
}

#[test]
fn a_group_edge_written_again_is_made_once() {
    // `g1 >> g2` between two groups of 1,000 tasks, written 600 times: a
    // million pairs checked again each time (44 s for 2,000).
    let repeats = "    g1 >> g2\n".repeat(600);
    let body = format!(
        "from airflow.utils.task_group import TaskGroup\n{DAG_HEAD}    with TaskGroup('g1') as g1:\n        a = [E(task_id=f'a{{i}}') for i in range(1000)]\n    with TaskGroup('g2') as g2:\n        b = [E(task_id=f'b{{i}}') for i in range(1000)]\n{repeats}"
    );
    let dir = temp_project(&[("dags/d.py", &body), ("ripple.yml", "dags: [dags]\n")]);
    let out = run_timed(
        dir.path(),
        &["dags", "--format", "json"],
        4_000_000,
        Some(60),
    );
    assert!(out.status.success(), "{:?}: {}", out.status, stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = doc.to_string();
    assert!(
        text.contains("g2.b999"),
        "{}",
        &text[..text.len().min(2000)]
    );
}

#[test]
fn a_dag_files_templates_pay_for_what_they_read() {
    // A 398-byte SQL template indexing a string it made once ran for
    // minutes; it is now stopped by its fuel and named.
    let body = format!(
        "{DAG_HEAD}    SQL(task_id='bomb', sql=\"{{% set s = 'x' * 15000000 %}}{{% for i in range(100000) %}}{{% if s[-1] == 'y' or s[1:] == s %}}{{% endif %}}{{% endfor %}}insert into s.u select 1\")\n    SQL(task_id='ok', sql='insert into s.t select 1')\n"
    )
    .replace(
        "from airflow.operators.empty import EmptyOperator as E",
        "from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator as SQL",
    );
    let dir = temp_project(&[("dags/d.py", &body), ("ripple.yml", "dags: [dags]\n")]);
    let findings = check_timed(dir.path(), 3_000_000, Some(60));
    assert!(
        findings.iter().any(|f| f["code"] == "airflow-template"
            && f["message"].as_str().unwrap_or_default().contains("fuel")),
        "{findings:#?}"
    );
}

#[test]
fn a_dag_files_sql_templates_are_bounded_too() {
    let body = format!(
        "{DAG_HEAD}    SQL(task_id='bomb', sql=\"{{% set s = 'x' * 10000000 %}}{{{{ ([s] * 400)|join }}}}\")\n    SQL(task_id='ok', sql='insert into s.t select 1')\n"
    )
    .replace(
        "from airflow.operators.empty import EmptyOperator as E",
        "from airflow.operators.empty import EmptyOperator as E\nfrom airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator as SQL",
    );
    let dir = temp_project(&[("dags/d.py", &body), ("ripple.yml", "dags: [dags]\n")]);
    let findings = check_limited(dir.path(), 3_000_000);
    // The template stays as written (no table read from it); the rest is
    // read.
    let _ = findings;
    let out = ripple(&["graph", "--format", "json"], dir.path());
    assert!(String::from_utf8_lossy(&out.stdout).contains("s.t"));
}

#[test]
fn under_an_address_space_limit_stacks_that_do_not_fit_are_reported() {
    // Big render stacks are address space; under `ulimit -v` they may not
    // be mapped. Ordinary models still render, a chain whose stack cannot
    // be had is reported, and nothing panics.
    let dir = temp_project(&[
        DBT_PROJECT,
        ("models/ok.sql", "select 1 as x"),
        (
            "models/chain.sql",
            &format!("select {{{{ x{} }}}} as c", ".a".repeat(300_000)),
        ),
    ]);
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1200000; exec \"$0\" check --format json --no-cache --project \"$1\"")
        .arg(bin())
        .arg(dir.path())
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(
        matches!(out.status.code(), Some(0..=2)) && !err.contains("panicked"),
        "{:?}: {err}",
        out.status
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings = doc["findings"].as_array().cloned().unwrap_or_default();
    assert!(
        finding_for(&findings, "models/ok.sql").is_none(),
        "{findings:#?}"
    );
    if let Some(f) = finding_for(&findings, "models/chain.sql") {
        assert!(
            f["message"]
                .as_str()
                .unwrap_or_default()
                .contains("ulimit -v"),
            "{f}"
        );
    }
}

// -------------------------------------------------------------------- SQL

/// `ripple check` and `ripple lineage FILE` on a plain SQL project under an
/// address-space limit of `kib`: the findings, after asserting that both
/// ended by themselves (no panic, no abort).
fn sql_limited(project: &Path, file: &str, kib: u64) -> (Vec<serde_json::Value>, String) {
    let findings = check_limited(project, kib);
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {kib}; exec \"$0\" lineage \"$1\" --dialect postgres"
        ))
        .arg(bin())
        .arg(project.join(file))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(
        matches!(out.status.code(), Some(0..=2)) && !err.contains("panicked"),
        "{:?}: {err}",
        out.status
    );
    (
        findings,
        String::from_utf8_lossy(&out.stdout).into_owned() + &err,
    )
}

fn parse_error<'a>(findings: &'a [serde_json::Value], file: &str) -> Option<&'a str> {
    findings
        .iter()
        .find(|f| f["file"] == file && f["code"] == "parse-error")
        .and_then(|f| f["message"].as_str())
}

#[test]
fn a_statement_of_too_many_set_operations_is_reported_and_the_rest_read() {
    // 80,000 `union all` branches in 2.8 MB: 1.4 GB to read (3.1 GB at
    // 90,000), and under `ulimit -v 4000000` a panic in stacker ("mmap
    // failed to allocate stack", exit 101) that ended the whole run.
    let unions = format!(
        "insert into mart.t (d, v) select d, v from raw.src{};\n",
        " union all select d, v from raw.src".repeat(80_000)
    );
    let dir = temp_project(&[
        ("ripple.yml", "dialect: postgres\nsql: [jobs]\n"),
        ("jobs/j.sql", &unions),
        ("jobs/ok.sql", "insert into mart.ok select * from raw.b;"),
    ]);
    let (findings, lineage) = sql_limited(dir.path(), "jobs/j.sql", 4_000_000);
    let message = parse_error(&findings, "jobs/j.sql")
        .unwrap_or_else(|| panic!("no parse error in {findings:#?}"));
    assert!(
        message.contains("80000 set operations") && message.contains("split"),
        "{message}"
    );
    assert!(
        parse_error(&findings, "jobs/ok.sql").is_none(),
        "{findings:#?}"
    );
    assert!(lineage.contains("set operations"), "{lineage}");
}

#[test]
fn deep_case_not_and_brackets_read_to_250_levels_and_are_named_past_it() {
    // sqlparser stopped at 50 levels: 60 nested CASEs or NOTs did not parse,
    // and the message named a token (`found: not`), not the depth.
    let case = |n: usize| {
        format!(
            "insert into mart.c{n} select {}1{} from raw.src;",
            "case when v > 0 then ".repeat(n),
            " end".repeat(n)
        )
    };
    let not = |n: usize| {
        format!(
            "insert into mart.n{n} select d from raw.src where {}v > 0;",
            "not ".repeat(n)
        )
    };
    let brackets = |n: usize| {
        format!(
            "insert into mart.b{n} select {}v{} from raw.src;",
            "(".repeat(n),
            ")".repeat(n)
        )
    };
    let files = [
        (
            "ripple.yml".to_string(),
            "dialect: postgres\nsql: [jobs]\n".to_string(),
        ),
        ("jobs/case60.sql".into(), case(60)),
        ("jobs/not60.sql".into(), not(60)),
        ("jobs/case250.sql".into(), case(250)),
        ("jobs/not250.sql".into(), not(250)),
        ("jobs/brackets250.sql".into(), brackets(250)),
        ("jobs/case300.sql".into(), case(300)),
        ("jobs/not300.sql".into(), not(300)),
        ("jobs/brackets300.sql".into(), brackets(300)),
        (
            "jobs/signs250.sql".into(),
            format!(
                "insert into mart.s select {}v from raw.src;",
                "- ".repeat(250)
            ),
        ),
        (
            "jobs/signs300.sql".into(),
            format!(
                "insert into mart.s select {}v from raw.src;",
                "- ".repeat(300)
            ),
        ),
    ];
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let dir = temp_project(&files);
    let findings = check_limited(dir.path(), 4_000_000);
    for ok in [
        "case60",
        "not60",
        "case250",
        "not250",
        "brackets250",
        "signs250",
    ] {
        assert!(
            parse_error(&findings, &format!("jobs/{ok}.sql")).is_none(),
            "{ok}: {findings:#?}"
        );
    }
    for deep in ["case300", "not300", "brackets300", "signs300"] {
        let message = parse_error(&findings, &format!("jobs/{deep}.sql"))
            .unwrap_or_else(|| panic!("{deep}: no parse error in {findings:#?}"));
        assert!(
            message.contains("nested too deeply") && message.contains("250 levels"),
            "{deep}: {message}"
        );
    }
    let out = ripple(&["graph", "--format", "json"], dir.path());
    let graph = String::from_utf8_lossy(&out.stdout);
    assert!(
        graph.contains("mart.c60") && graph.contains("mart.n250"),
        "{graph}"
    );
}

#[test]
fn a_statement_whose_stack_cannot_be_mapped_is_reported_and_the_rest_read() {
    // 300,000 terms of `1+1+...` (1.2 MB) need a stack of 1.2 GB (more in
    // a debug build): under `ulimit -v 1000000` stacker could not map it
    // and panicked (exit 101); now the statement is reported and the other
    // files read.
    let plus = format!(
        "insert into mart.p select 1{} from raw.a;\n",
        "+1".repeat(300_000)
    );
    let dir = temp_project(&[
        ("ripple.yml", "dialect: postgres\nsql: [jobs]\n"),
        ("jobs/plus.sql", &plus),
        ("jobs/ok.sql", "insert into mart.ok select * from raw.b;"),
    ]);
    let (findings, lineage) = sql_limited(dir.path(), "jobs/plus.sql", 1_000_000);
    let message = parse_error(&findings, "jobs/plus.sql")
        .unwrap_or_else(|| panic!("no parse error in {findings:#?}"));
    assert!(
        message.contains("ulimit -v") && message.contains("split"),
        "{message}"
    );
    assert!(
        parse_error(&findings, "jobs/ok.sql").is_none(),
        "{findings:#?}"
    );
    assert!(lineage.contains("ulimit -v"), "{lineage}");
}

#[test]
fn a_statement_is_measured_before_it_is_tokenized() {
    // The tokenizer makes every token before any can be counted, about 110
    // bytes of memory a byte: 20 million terms of `1+1+...` (40 MB) took
    // 4.4 GB before the token bound could refuse them, and 20 MB of blanks
    // (a token each) 2.2 GB. Under `ulimit -v 1000000` both aborted.
    let plus = format!(
        "insert into mart.p select 1{} from raw.a;\ninsert into mart.after_plus select * from raw.c;\n",
        "+1".repeat(20_000_000)
    );
    let blanks = format!(
        "insert into mart.b select 1{}from raw.a;\ninsert into mart.after_blanks select * from raw.c;\n",
        " ".repeat(20_000_000)
    );
    let dir = temp_project(&[
        ("ripple.yml", "dialect: postgres\nsql: [jobs]\n"),
        ("jobs/plus.sql", &plus),
        ("jobs/blanks.sql", &blanks),
        ("jobs/ok.sql", "insert into mart.ok select * from raw.b;"),
    ]);
    for (file, after) in [
        ("jobs/plus.sql", "mart.after_plus"),
        ("jobs/blanks.sql", "mart.after_blanks"),
    ] {
        let (findings, lineage) = sql_limited(dir.path(), file, 1_000_000);
        let message = parse_error(&findings, file)
            .unwrap_or_else(|| panic!("no parse error for {file} in {findings:#?}"));
        assert!(
            message.contains("too large") && message.contains("split"),
            "{message}"
        );
        assert!(
            parse_error(&findings, "jobs/ok.sql").is_none(),
            "{findings:#?}"
        );
        assert!(lineage.contains(after), "{file}: {lineage}");
    }
}

#[test]
fn a_model_rendering_a_flood_of_statements_is_reported_and_its_edges_kept() {
    // 40 models of 80 bytes each looping to 100,000 statements once took
    // `impact --columns` 31 s and 5.9 GB: every statement read with its
    // columns is kept. dbt runs a model as one statement.
    let flood = "{% for i in range(5000) %}select a from {{ ref('base') }};\n{% endfor %}";
    let dir = temp_project(&[
        (
            "dbt_project.yml",
            "name: p\nversion: '1.0'\nprofile: p\nmodel-paths: [models]\n",
        ),
        ("models/base.sql", "select 1 as a"),
        ("models/flood.sql", flood),
        ("models/fine.sql", "select a from {{ ref('base') }}"),
    ]);
    let findings = check_limited(dir.path(), 4_000_000);
    let flood_finding = findings
        .iter()
        .find(|f| f["file"] == "models/flood.sql" && f["code"] == "too-many-statements")
        .unwrap_or_else(|| panic!("no finding in {findings:#?}"));
    assert!(
        flood_finding["message"]
            .as_str()
            .is_some_and(|m| m.contains("5000 SQL statements")),
        "{flood_finding}"
    );
    assert!(
        !findings.iter().any(|f| f["file"] == "models/fine.sql"),
        "{findings:#?}"
    );
    // The model's ref is still an edge: impact reaches it, never short.
    let out = ripple(
        &[
            "impact",
            "base",
            "--from",
            "2024-01-01",
            "--to",
            "2024-01-02",
            "--columns",
            "a",
            "--format",
            "json",
        ],
        dir.path(),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("\"flood\"") && text.contains("\"fine\""),
        "{text}{}",
        stderr(&out)
    );
}

#[test]
fn a_dag_files_templates_share_one_fuel() {
    // Fuel was per render: a 480-byte file looping 1,000 tasks, each
    // template spinning 100,000 times, took 245 s. Now the file's templates
    // share ten renders' worth; past it they are kept as written, each
    // named, and the next file has its own.
    let body = format!(
        "{DAG_HEAD}    for i in range(200):\n        SQL(task_id=f't{{i}}', sql='{{% for j in range(100000) %}}{{% endfor %}}insert into s.t select 1')\n"
    )
    .replace(
        "from airflow.operators.empty import EmptyOperator as E",
        "from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator as SQL",
    );
    let (dags, findings) = dag_file(&body);
    assert_eq!(dags[0].tasks.len(), 200);
    let spent: Vec<_> = findings
        .iter()
        .filter(|f| f.code == "airflow-template" && f.message.contains("fuel they share"))
        .collect();
    assert!(
        (150..200).contains(&spent.len()),
        "{} spent of {}: {:#?}",
        spent.len(),
        findings.len(),
        findings.first()
    );
    assert!(spent.iter().any(|f| f.message.contains("task `t199`")));
    // Another file starts with its own fuel.
    let (_, fresh) = dag_file(&body.replace("range(200)", "range(2)"));
    assert!(
        !fresh.iter().any(|f| f.code == "airflow-template"),
        "{fresh:#?}"
    );
}

#[test]
fn production_runs_are_listed_up_to_a_total_for_all_dags() {
    // 1,000 DAGs of a minute cron in a 170-byte file once listed 100
    // million runs (91 s, 20 GB). Past a million in all, the DAGs left
    // (by id) are listed as far as the total goes and marked truncated:
    // a plan counts the rest of their horizon as busy.
    let body = "from airflow import DAG\nfrom airflow.operators.empty import EmptyOperator as E\nfor i in range(12):\n    with DAG(f'd{i:02d}', schedule='* * * * *') as dag:\n        E(task_id='t')\n";
    let (dags, _) = dag_file(body);
    assert_eq!(dags.len(), 12);
    let from = 20_454 * 24; // 2026-01-01, in hours since 1970
    let schedule = ripple::schedule::production_schedule(
        &dags,
        &ripple::config::Config::default(),
        from,
        from + 365 * 24,
    );
    let listed: Vec<(usize, bool)> = schedule
        .dags
        .iter()
        .map(|d| (d.runs.len(), d.truncated))
        .collect();
    let total: usize = listed.iter().map(|l| l.0).sum();
    assert!(
        (999_000..=1_000_000).contains(&total),
        "{total}: {listed:?}"
    );
    assert!(listed.iter().all(|&(_, truncated)| truncated), "{listed:?}");
    assert_eq!(listed[11], (0, true), "{listed:?}");
}

// ----------------------------------------------------------- wide columns

/// `k000`, a model of `width` columns, then `n` models each `select *`
/// from the one before (ids zero-padded, so job order is chain order).
fn wide_chain(width: usize, n: usize) -> tempfile::TempDir {
    let cols: Vec<String> = (0..width).map(|i| format!("1 as c{i}")).collect();
    let mut files = vec![
        (DBT_PROJECT.0.to_string(), DBT_PROJECT.1.to_string()),
        (
            "models/k000.sql".to_string(),
            format!("select {}", cols.join(", ")),
        ),
    ];
    for i in 1..=n {
        files.push((
            format!("models/k{i:03}.sql"),
            format!("select * from {{{{ ref('k{:03}') }}}}", i - 1),
        ));
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    temp_project(&files)
}

#[test]
fn an_openlineage_export_holds_a_bounded_number_of_column_fields() {
    // 1,000 such models of 9,000 columns wrote 1.6 GB (10 GB of memory)
    // from 139 KB of SQL. Now a reading holds at most a million dataset
    // columns (past it a `*` stays a `*`), and an export writes at most a
    // million column fields, naming how many jobs went without.
    let dir = wide_chain(9_000, 120);
    let out = ripple(&["graph", "--format", "openlineage"], dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let events: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events.len(), 121);
    let facets = |e: &serde_json::Value| e["outputs"][0]["facets"].clone();
    let fields = |e: &serde_json::Value| {
        let f = facets(e);
        f["schema"]["fields"].as_array().map_or(0, Vec::len)
            + f["columnLineage"]["fields"]
                .as_object()
                .map_or(0, |o| o.len())
    };
    let total: usize = events.iter().map(fields).sum();
    assert!(total <= 1_000_000, "{total}");
    // The first jobs carry both facets in full.
    assert_eq!(fields(&events[1]), 18_000);
    // Jobs past the columns a reading holds: their `*` passes everything.
    let last = facets(&events[120]);
    assert!(last["columnLineage"]["fields"]["*"].is_object(), "{last}");
    let left_out = events.iter().filter(|e| facets(e).is_null()).count();
    assert!(left_out > 0);
    assert!(
        stderr(&out).contains(&format!("{left_out} jobs exported without column facets")),
        "{}",
        stderr(&out)
    );
}

// -------------------------------------------------------------- plan size

#[test]
fn a_plan_of_more_tasks_than_anyone_could_review_is_refused() {
    // Two centuries of two-day batches over an Airflow task rendered per
    // date once wrote 355 MB of plan in 11 s from 1.5 KB of input (a
    // millennium ran past two minutes).
    let dag = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/backfill_airflow/dags/orders.py"),
    )
    .unwrap();
    let yml = "dialect: postgres\ndatasets:\n  landing.orders: { grain: day, start: 1970-01-01 }\n  raw.orders: { grain: day, partition_column: ordered_at }\n  mart.daily: { grain: day, partition_column: order_date }\nbackfill:\n  batch: { day: 2 }\n";
    let dir = temp_project(&[("ripple.yml", yml), ("dags/orders.py", &dag)]);
    let plan = |to: &str| {
        ripple(
            &[
                "plan",
                "landing.orders",
                "--from",
                "1970-01-01",
                "--to",
                to,
                "--as-of",
                "4000-01-01",
            ],
            dir.path(),
        )
    };
    let out = plan("2169-12-31");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    assert!(
        err.contains("more than 50000 tasks") && err.contains("backfill.batch"),
        "{err}"
    );
    // A decade is planned as before.
    let out = plan("1979-12-31");
    assert!(out.status.success(), "{}", stderr(&out));
}
