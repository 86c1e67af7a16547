//! Hostile inputs that once crashed, hung or exhausted ripple (issue
//! "Hardening"): each shape here aborted, ran for minutes or grew without
//! bound before its fix. Sizes are the reported ones or larger; nothing
//! here is timed, the tests assert what comes back.

use std::path::Path;

use ripple::graph::LineageGraph;
use ripple::ingest::{LoadOptions, load_project, read_dags};
use ripple::project::Diagnostic;
use ripple::sql::SqlDialect;

fn write(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

/// A plain SQL project on PostgreSQL reading `raw.src` (daily, by `d`)
/// whose job `jobs/j<i>.sql` restates the table `tables[i]` (as SQL
/// writes it) by delete and insert.
fn restating_project(root: &Path, tables: &[&str]) {
    write(
        root,
        &[(
            "ripple.yml",
            "dialect: postgres\nsql: [jobs]\ndatasets:\n  raw.src: {grain: day, start: 2025-01-01, partition_column: d}\n",
        )],
    );
    for (i, table) in tables.iter().enumerate() {
        write(
            root,
            &[(
                &format!("jobs/j{i}.sql"),
                &format!(
                    "delete from {table} where d >= '2020-01-01';\ninsert into {table} (d, v) select d, v from raw.src;\n"
                ),
            )],
        );
    }
}

fn dag_file(body: &str) -> (Vec<ripple::project::Dag>, Vec<Diagnostic>) {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &[("dags/d.py", body)]);
    let dags = read_dags(dir.path(), &[dir.path().join("dags")], SqlDialect::Postgres);
    let findings = dags
        .check()
        .into_iter()
        .chain(dags.warnings.clone())
        .collect();
    (dags.dags, findings)
}

const DAG_HEAD: &str = "from airflow import DAG\nfrom airflow.operators.empty import EmptyOperator as E\nwith DAG('d', schedule='@daily') as dag:\n    a = E(task_id='a')\n    b = E(task_id='b')\n";

#[test]
fn a_long_dependency_chain_is_read_not_a_stack_overflow() {
    let chain = ["a", "b"].repeat(50_000).join(" >> ");
    let (dags, findings) = dag_file(&format!("{DAG_HEAD}    {chain}\n"));
    assert_eq!(dags.len(), 1);
    // a >> b >> a: both depend on each other.
    assert!(
        findings
            .iter()
            .any(|d| d.to_string().contains("task-cycle")),
        "{findings:#?}"
    );
}

#[test]
fn deep_python_expressions_of_every_shape_are_read() {
    let n = 100_000;
    let shapes = [
        format!("x = {}b", "a.".repeat(n)),
        format!("x = {}{}", "f(".repeat(n), ")".repeat(n)),
        format!("x = {}{}", "[".repeat(n), "]".repeat(n)),
        format!("x = {}1", "not ".repeat(n)),
        format!("x = {}1", "-".repeat(n)),
        format!("x = 1{}", " + 1".repeat(n)),
        format!("x = {}{}", "(".repeat(n), ")".repeat(n)),
    ];
    for body in shapes {
        let (dags, _) = dag_file(&format!("{DAG_HEAD}{body}\n"));
        assert_eq!(dags.len(), 1, "{}", &body[..20]);
    }
}

#[test]
fn a_task_that_depends_on_itself_is_a_cycle() {
    let (_, findings) = dag_file(&format!("{DAG_HEAD}    a >> a\n"));
    assert!(
        findings
            .iter()
            .any(|d| d.to_string().contains("task-cycle") && d.to_string().contains("tasks a ")),
        "{findings:#?}"
    );
}

#[test]
fn a_dag_of_many_tasks_keeps_every_dependency_once() {
    let n = 20_000;
    let mut body = String::from(
        "from airflow import DAG\nfrom airflow.operators.empty import EmptyOperator as E\nwith DAG('d') as dag:\n",
    );
    for i in 0..n {
        body.push_str(&format!("    t{i} = E(task_id='t{i}')\n"));
    }
    for i in 1..n {
        body.push_str(&format!("    t{} >> t{i}\n    t{} >> t{i}\n", i - 1, i - 1));
    }
    let (dags, findings) = dag_file(&body);
    assert!(findings.is_empty(), "{findings:#?}");
    let tasks = &dags[0].tasks;
    assert_eq!(tasks.len(), n);
    assert!(tasks[0].upstream.is_empty());
    for (i, t) in tasks.iter().enumerate().skip(1) {
        assert_eq!(t.upstream, [format!("t{}", i - 1)]);
    }
}

#[test]
fn an_oversized_dag_file_is_reported_not_read() {
    // Past 64 MiB (a DAG of 100,000 tasks is about 5 MB).
    let (dags, findings) = dag_file(&format!("{DAG_HEAD}{}", "# padding\n".repeat(6_800_000)));
    assert!(dags.is_empty());
    assert!(
        findings
            .iter()
            .any(|d| d.to_string().contains("too large") && d.to_string().contains("d.py")),
        "{findings:#?}"
    );
}

fn graph(root: &Path) -> LineageGraph {
    LineageGraph::build(load_project(root, &LoadOptions::default()).unwrap())
}

#[test]
fn a_lineage_chain_of_many_tables_is_checked() {
    // 20,000 SQL tasks, each reading the table the previous one wrote: the
    // graph is one long path, which recursive cycle finding overflowed.
    let n = 20_000;
    let mut body = String::from(
        "from airflow import DAG\nfrom airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator as SQL\nwith DAG('d') as dag:\n",
    );
    for i in 1..n {
        body.push_str(&format!(
            "    t{i} = SQL(task_id='t{i}', sql='insert into s.t{i} select * from s.t{}')\n",
            i - 1
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &[("dags/d.py", &body)]);
    let g = graph(dir.path());
    assert_eq!(g.graph.node_count(), n);
    assert!(g.cycles().is_empty());
    assert!(
        g.check().iter().all(|f| !f.to_string().contains("cycle")),
        "a chain is not a cycle"
    );
}

/// The binary under test: `RIPPLE_BIN` when set (CI points it at the release
/// build, whose stack frames differ from debug's: deep input must be safe in
/// the binary users run), else the one cargo built for the tests.
fn ripple() -> assert_cmd::Command {
    assert_cmd::Command::new(bin())
}

/// The path of the binary under test (see [`ripple`]).
fn bin() -> std::path::PathBuf {
    std::env::var_os("RIPPLE_BIN")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| assert_cmd::cargo::cargo_bin("ripple"))
}

/// What a run printed, standard output then standard error.
fn both(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn an_endless_input_is_refused_with_its_name() {
    let out = ripple().args(["lineage", "/dev/zero"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/dev/zero") && err.contains("larger than"),
        "{err}"
    );
}

#[test]
fn a_chain_of_models_joined_using_a_column_stays_small_in_diff() {
    // `select * from m join m as b using (c)` doubled the columns per model
    // (22 models filled 24 GB); under a 2 GB address-space limit, 30 now
    // finish.
    let base = tempfile::tempdir().unwrap();
    let head = tempfile::tempdir().unwrap();
    for (dir, value) in [(&base, 2), (&head, 3)] {
        let mut files = vec![
            (
                "dbt_project.yml".to_string(),
                "name: chain\nversion: '1.0'\nprofile: x\n".to_string(),
            ),
            (
                "models/m0.sql".to_string(),
                format!("select 1 as c, {value} as d"),
            ),
        ];
        for i in 1..=30 {
            files.push((
                format!("models/m{i}.sql"),
                format!(
                    "select * from {{{{ ref('m{p}') }}}} join {{{{ ref('m{p}') }}}} as b using (c)",
                    p = i - 1
                ),
            ));
        }
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        write(dir.path(), &files);
    }
    let bin = bin();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(
            "ulimit -v 2000000; exec \"$0\" diff --base-dir \"$1\" --head-dir \"$2\" --format json",
        )
        .arg(&bin)
        .arg(base.path())
        .arg(head.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("model.m30"), "{stdout}");
}

/// The worked example in a temporary folder with `production` as its
/// production runs, planned from `--start 2026-02-01T18`.
fn plan_with_production(production: &str, files: &[(&str, &str)]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), files);
    let src = Path::new("fixtures/worked_example/declared");
    for file in ["dbt_project.yml", "ripple.yml"] {
        std::fs::copy(src.join(file), dir.path().join(file)).unwrap();
    }
    std::fs::create_dir(dir.path().join("models")).unwrap();
    for entry in std::fs::read_dir(src.join("models")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(
            entry.path(),
            dir.path().join("models").join(entry.file_name()),
        )
        .unwrap();
    }
    let config = std::fs::read_to_string(src.join("ripple.yml")).unwrap();
    let original = "    - { dag: daily_etl, cron: \"0 2 * * *\", duration: 90m }";
    assert!(config.contains(original));
    std::fs::write(
        dir.path().join("ripple.yml"),
        config.replace(original, production),
    )
    .unwrap();
    ripple()
        .args([
            "plan",
            "raw.orders",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-12",
        ])
        .args([
            "--as-of",
            "2026-02-01",
            "--start",
            "2026-02-01T18",
            "--format",
            "json",
        ])
        .arg("--project")
        .arg(dir.path())
        .output()
        .unwrap()
}

#[test]
fn production_that_never_stops_leaves_no_slot_past_the_listing_limit() {
    // Every minute for 10 minutes: production never pauses. The listing
    // stops at 100,000 runs (69 days); the plan once scheduled every task
    // on top of production right after them.
    let out = plan_with_production(
        "    - { dag: daily_etl, cron: \"* * * * *\", duration: 10m }",
        &[],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(err.contains("finds no free slot"), "{err}");
}

#[test]
fn a_production_schedule_ripple_cannot_read_refuses_the_schedule() {
    // In ripple.yml: refused when the file loads, by every command alike.
    let out = plan_with_production(
        "    - { dag: daily_etl, cron: \"every night\", duration: 90m }",
        &[],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        err.contains("ripple.yml:26")
            && err.contains("backfill.production.cron")
            && err.contains("every night"),
        "{err}"
    );
    // In a DAG file: its runs are unknown, so no schedule is made.
    let out = plan_with_production(
        "    - { dag: daily_etl, cron: \"0 2 * * *\", duration: 90m }",
        &[(
            "dags/load.py",
            "from airflow import DAG\nwith DAG('load', schedule='every night') as dag:\n    pass\n",
        )],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        err.contains("production DAG `load`")
            && err.contains("every night")
            && err.contains("runs are unknown"),
        "{err}"
    );
}

#[test]
fn check_refuses_what_plan_refuses() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            ("models/a.sql", "select 1 as x"),
            (
                "ripple.yml",
                "backfill:\n  windows: ['20:00-06:00']\n  production:\n    - { dag: a, cron: '0 2 * * *', duration: 1h }\n    - { dag: b, cron: '0 2 * *', duration: 1h }\n",
            ),
        ],
    );
    for command in ["check", "graph"] {
        let out = ripple()
            .args([command, "--project"])
            .arg(dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command}");
        assert!(
            err.contains("ripple.yml:5") && err.contains("DAG `b`"),
            "{command}: {err}"
        );
    }
    write(
        dir.path(),
        &[("ripple.yml", "backfill:\n  windows: ['25:00-06:00']\n")],
    );
    let out = ripple()
        .args(["check", "--project"])
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        err.contains("backfill.windows") && err.contains("25:00-06:00"),
        "{err}"
    );
}

#[path = "support/git_repo.rs"]
mod git_repo;
#[path = "support/temp_project.rs"]
mod temp_project;

/// `ripple diff --base HEAD` in `repo` with `RIPPLE_TMPDIR` set to `tmp`.
fn diff_with_scratch(repo: &git_repo::GitRepo, tmp: &std::ffi::OsStr) -> std::process::Output {
    ripple()
        .current_dir(repo.path())
        .env("RIPPLE_TMPDIR", tmp)
        .args(["diff", "--base", "HEAD", "--format", "json"])
        .output()
        .unwrap()
}

const SMALL_DBT: &[(&str, &str)] = &[
    ("dbt_project.yml", "name: s\nversion: '1.0'\nprofile: s\n"),
    ("models/a.sql", "select 1 as x"),
];

#[test]
fn copies_left_by_killed_runs_are_swept_and_ours_are_removed() {
    let repo = git_repo::GitRepo::new(SMALL_DBT);
    let tmp = tempfile::tempdir().unwrap();
    // A copy whose ripple is gone (no such pid), and one of a live process.
    let stale = tmp.path().join("ripple-rev-999999999-abc");
    let live = tmp
        .path()
        .join(format!("ripple-rev-{}-abc", std::process::id()));
    let unrelated = tmp.path().join("something-else");
    for d in [&stale, &live, &unrelated] {
        std::fs::create_dir_all(d.join("models")).unwrap();
    }
    let out = diff_with_scratch(&repo, tmp.path().as_os_str());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!stale.exists(), "the dead run's copy is swept");
    assert!(live.exists() && unrelated.exists());
    let left: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left.len(), 2, "this run's copy is gone: {left:?}");
}

#[test]
fn a_scratch_folder_that_is_empty_relative_missing_or_inside_the_repo_is_refused() {
    let repo = git_repo::GitRepo::new(SMALL_DBT);
    let inside = repo.path().join("tmp");
    std::fs::create_dir(&inside).unwrap();
    for (value, why) in [
        ("".into(), "is empty"),
        ("relative/dir".into(), "not an absolute path"),
        ("/no/such/folder".into(), "does not exist"),
        (inside.into_os_string(), "inside the repository"),
    ] {
        let out = diff_with_scratch(&repo, &value);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{value:?}: {err}");
        assert!(err.contains("RIPPLE_TMPDIR") && err.contains(why), "{err}");
    }
}

fn check_json(root: &Path) -> Vec<String> {
    let out = ripple()
        .args(["check", "--format", "json", "--project"])
        .arg(root)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    doc["findings"]
        .as_array()
        .or_else(|| doc.as_array())
        .unwrap_or_else(|| panic!("{doc}"))
        .iter()
        .map(|f| f.to_string())
        .collect()
}

#[test]
fn project_paths_stay_inside_the_project_unless_allowed() {
    let top = tempfile::tempdir().unwrap();
    let root = top.path().join("project");
    write(
        top.path(),
        &[
            ("outside/stolen.sql", "select * from secret.table_outside"),
            (
                "project/dbt_project.yml",
                "name: p\nversion: '1.0'\nprofile: p\nmodel-paths: ['models', '../outside', '/etc', 'linked']\n",
            ),
            ("project/models/a.sql", "select 1 as x"),
        ],
    );
    std::os::unix::fs::symlink(top.path().join("outside"), root.join("linked")).unwrap();
    let findings = check_json(&root);
    let outside: Vec<&String> = findings
        .iter()
        .filter(|f| f.contains("path-outside-project"))
        .collect();
    assert_eq!(outside.len(), 3, "{findings:#?}");
    for path in ["../outside", "/etc", "linked"] {
        assert!(
            outside
                .iter()
                .any(|f| f.contains(&format!("`{path}`")) && f.contains("dbt_project.yml")),
            "{path}: {findings:#?}"
        );
    }
    let graph = |root: &Path| {
        let out = ripple()
            .args(["graph", "--format", "json", "--project"])
            .arg(root)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(!graph(&root).contains("stolen"));
    // ripple.yml's own paths too; and when allowed, they are read.
    write(
        top.path(),
        &[("project/ripple.yml", "sql: ['../outside']\n")],
    );
    assert!(
        check_json(&root)
            .iter()
            .any(|f| f.contains("path-outside-project") && f.contains("ripple.yml"))
    );
    write(
        top.path(),
        &[(
            "project/ripple.yml",
            "sql: ['../outside']\nallow_outside_project: true\n",
        )],
    );
    let g = graph(&root);
    assert!(g.contains("secret.table_outside"), "{g}");
}

#[test]
fn folders_that_cannot_be_listed_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            (
                "dbt_project.yml",
                "name: p\nversion: '1.0'\nprofile: p\nmodel-paths: ['models', 'notes.txt']\n",
            ),
            ("models/a.sql", "select 1 as x"),
            ("notes.txt", "not a folder"),
            ("models/locked/b.sql", "select 2 as y"),
        ],
    );
    let findings = check_json(dir.path());
    assert!(
        findings
            .iter()
            .any(|f| f.contains("unreadable") && f.contains("notes.txt")),
        "{findings:#?}"
    );
    // Permissions only stop a user who is not root.
    let locked = dir.path().join("models/locked");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read_dir(&locked).is_err() {
        let findings = check_json(dir.path());
        assert!(
            findings
                .iter()
                .any(|f| f.contains("unreadable") && f.contains("models/locked")),
            "{findings:#?}"
        );
    }
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn output_replaces_a_link_instead_of_writing_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let precious = dir.path().join("precious.txt");
    std::fs::write(&precious, "keep me").unwrap();
    let out_path = dir.path().join("report.json");
    std::os::unix::fs::symlink(&precious, &out_path).unwrap();
    let out = ripple()
        .args([
            "graph",
            "--format",
            "json",
            "--project",
            "fixtures/shop",
            "--output",
        ])
        .arg(&out_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep me");
    assert!(
        !std::fs::symlink_metadata(&out_path)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read_to_string(&out_path)
            .unwrap()
            .contains("fct_orders")
    );
    // Nothing is left beside it.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
}

/// `ripple graph --format json --project fixtures/shop --output <path>`.
fn graph_to(path: &Path) -> std::process::Output {
    ripple()
        .args([
            "graph",
            "--format",
            "json",
            "--project",
            "fixtures/shop",
            "--output",
        ])
        .arg(path)
        .output()
        .unwrap()
}

#[test]
fn output_to_a_fifo_or_a_device_writes_to_it_and_never_replaces_it() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let out = graph_to(&fifo);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(reader.join().unwrap().contains("fct_orders"));
    let t = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(t.is_fifo(), "the FIFO was replaced by {t:?}");
    // Only the FIFO: no temporary file was left beside it.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    // No process reads it: refused after a wait, never a hang (it once
    // blocked in `open` forever).
    let out = graph_to(&fifo);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("a FIFO that no process reads"), "{stderr}");
    // `/dev/null` stays the device, whoever runs ripple.
    let out = graph_to(Path::new("/dev/null"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t = std::fs::symlink_metadata("/dev/null").unwrap().file_type();
    assert!(t.is_char_device());
    // A folder is refused with what to do; so is a folder's name.
    let out = graph_to(dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("give --output a file name"));
    let out = graph_to(&dir.path().join("new/"));
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ending in `/`"), "{stderr}");
}

#[test]
fn output_keeps_a_files_mode_and_gives_a_new_one_the_umasks() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let kept = dir.path().join("kept.json");
    std::fs::write(&kept, "old").unwrap();
    std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert!(graph_to(&kept).status.success());
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&kept), 0o644);
    assert!(
        std::fs::read_to_string(&kept)
            .unwrap()
            .contains("fct_orders")
    );
    // A new file: 0666 less the umask (022 unless the environment says otherwise).
    let new = dir.path().join("new.json");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "umask 027 && exec \"$0\" graph --format json --project fixtures/shop --output '{}'",
            new.display()
        ))
        .arg(bin())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(mode(&new), 0o640);
    // A folder that is not there: the error names the file asked for, not
    // the temporary file ripple would have written beside it.
    let out = graph_to(&dir.path().join("no/such/dir/x.json"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("no/such/dir/x.json: No such file or directory") && !err.contains(".ripple-"),
        "{err}"
    );
}

#[test]
fn output_killed_by_a_file_size_limit_leaves_no_temporary_file() {
    // `ulimit -f` sends SIGXFSZ when a write passes it: ripple's temporary
    // file beside the target was left behind, the target kept whole.
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("graph.json");
    std::fs::write(&target, "old").unwrap();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -f 4 && exec \"$0\" graph --no-cache --format json --project fixtures/shop --output \"$1\"")
        .arg(bin())
        .arg(&target)
        .output()
        .unwrap();
    // Killed by the signal, or stopped by the write error it leaves once
    // ripple watches it: either way nothing is left.
    assert!(!out.status.success(), "15 KB written under a 4 KB limit");
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["graph.json"]);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "old");
    // The warm cache's own temporary files, killed mid-write the same way.
    let project = tempfile::tempdir().unwrap();
    let copied = std::process::Command::new("cp")
        .args(["-r", "fixtures/shop/."])
        .arg(project.path())
        .status()
        .unwrap();
    assert!(copied.success());
    let _ = std::fs::remove_dir_all(project.path().join(".ripple_cache"));
    // Killed, or (the signal watched, the write failing with EFBIG) the
    // cache not written and said so, exit 0: which one is a race between
    // the writer and the thread handling the signal (CI saw both).
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -f 4 && exec \"$0\" graph --format json --project \"$1\" --output /dev/null")
        .arg(bin())
        .arg(project.path())
        .output()
        .unwrap();
    assert!(
        !out.status.success()
            || String::from_utf8_lossy(&out.stderr).contains("the cache could not be written"),
        "the cache written whole under a 4 KB limit: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cache = project.path().join(".ripple_cache");
    let left: Vec<String> = std::fs::read_dir(&cache)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".tmp"))
                .collect()
        })
        .unwrap_or_default();
    assert!(left.is_empty(), "left in the cache: {left:?}");
}

#[test]
fn output_over_a_hard_link_updates_every_name_and_never_keeps_setuid() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.json");
    let other = dir.path().join("also.json");
    std::fs::write(&plan, "old").unwrap();
    std::fs::hard_link(&plan, &other).unwrap();
    assert!(graph_to(&plan).status.success());
    // One file under two names, as `>` leaves it.
    assert_eq!(
        std::fs::metadata(&plan).unwrap().ino(),
        std::fs::metadata(&other).unwrap().ino()
    );
    assert!(
        std::fs::read_to_string(&other)
            .unwrap()
            .contains("fct_orders")
    );
    let suid = dir.path().join("suid.json");
    std::fs::write(&suid, "old").unwrap();
    std::fs::set_permissions(&suid, std::fs::Permissions::from_mode(0o6755)).unwrap();
    assert!(graph_to(&suid).status.success());
    let mode = std::fs::metadata(&suid).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o755);
}

#[test]
fn escape_sequences_and_direction_overrides_in_names_never_reach_a_reader_raw() {
    let dir = tempfile::tempdir().unwrap();
    let name = "x\u{1b}[2J\u{202e}gpj.exe";
    write(
        dir.path(),
        &[
            (
                "jobs/a.sql",
                &format!("create table mart.\"{name}\" as select d, v from raw.t;\n"),
            ),
            (
                "ripple.yml",
                "dialect: postgres\nmodels: [jobs]\ndatasets:\n  raw.t: { grain: day }\n",
            ),
        ],
    );
    let raw = |b: &[u8]| {
        let t = String::from_utf8_lossy(b).to_string();
        t.contains('\u{1b}') || t.contains('\u{202e}')
    };
    for format in ["text", "markdown", "html", "svg", "dot", "mermaid"] {
        let out = ripple()
            .args([
                "impact",
                "raw.t",
                "--from",
                "2026-01-10",
                "--to",
                "2026-01-10",
            ])
            .args([
                "--as-of",
                "2026-02-01",
                "--no-cache",
                "--format",
                format,
                "--project",
            ])
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !raw(&out.stdout),
            "{format}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("\\u{202e}"),
            "{format}"
        );
    }
    // An error naming what the user typed.
    let out = ripple()
        .args([
            "impact",
            name,
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-10",
            "--no-cache",
        ])
        .arg("--project")
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        !raw(&out.stderr),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn quoted_mixed_case_names_are_tables_of_their_own_where_the_engine_says_so() {
    for (dialect, apart) in [("postgres", true), ("snowflake", true), ("duckdb", false)] {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            &[
                (
                    "ripple.yml",
                    &format!("dialect: {dialect}\nmodels: [jobs]\n"),
                ),
                (
                    "jobs/a.sql",
                    "create table mart.\"Orders\" as select * from raw.o",
                ),
                (
                    "jobs/b.sql",
                    "create table mart.reader as select * from mart.orders",
                ),
            ],
        );
        let g = graph(dir.path());
        let ids: Vec<&str> = g.graph.node_weights().map(|d| d.id.as_str()).collect();
        assert_eq!(
            ids.contains(&"table.mart.Orders"),
            apart,
            "{dialect}: {ids:?}"
        );
        let reads_orders = g
            .graph
            .node_indices()
            .find(|&n| g.graph[n].id == "table.mart.reader")
            .map(|n| {
                g.graph
                    .neighbors_directed(n, petgraph::Direction::Incoming)
                    .map(|u| g.graph[u].id.clone())
                    .collect::<Vec<_>>()
            })
            .unwrap();
        assert_eq!(reads_orders, ["table.mart.orders"], "{dialect}");
        // Where the engine folds, the reader reads what `a.sql` writes.
        let orders = g
            .graph
            .node_indices()
            .find(|&n| g.graph[n].id == "table.mart.orders")
            .unwrap();
        let written = g
            .graph
            .neighbors_directed(orders, petgraph::Direction::Incoming)
            .count()
            > 0;
        assert_eq!(written, !apart, "{dialect}");
    }
}

#[test]
fn deep_sql_of_every_shape_is_answered_not_a_crash() {
    let n = 100_000;
    let shapes = [
        format!("select {}1 as x from t", "1 + ".repeat(n)),
        format!("select x from t where {}", "a = 1 or ".repeat(n) + "a = 2"),
        format!("select case {} end from t", "when a = 1 then 2 ".repeat(n)),
        format!("select x from t where a in ({}1)", "1, ".repeat(n)),
        format!("select {}1{} as x from t", "(".repeat(n), ")".repeat(n)),
        format!(
            "select x from {}t{}",
            "(select * from ".repeat(n),
            ")".repeat(n)
        ),
        format!("select {}x from t", "-".repeat(n)),
        format!("select {}x from t", "not ".repeat(n)),
    ];
    for sql in shapes {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("q.sql"), format!("insert into out {sql};")).unwrap();
        for extra in [&[][..], &["--columns"][..]] {
            let out = ripple()
                .args(["lineage", "--format", "json"])
                .args(extra)
                .arg(dir.path().join("q.sql"))
                .output()
                .unwrap();
            // Answered: lineage, or a per-statement error; never a signal.
            assert!(out.status.code().is_some(), "{}: killed", &sql[..30]);
            let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
                panic!(
                    "{}: {e} {}",
                    &sql[..30],
                    String::from_utf8_lossy(&out.stderr)
                )
            });
            assert!(
                doc["statements"].is_array() || doc["errors"].is_array(),
                "{doc}"
            );
        }
    }
}

#[test]
fn deep_jinja_and_yaml_are_reported_not_a_crash() {
    let n = 50_000;
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            ("dbt_project.yml", "name: p\nversion: '1.0'\nprofile: p\n"),
            (
                "models/a.sql",
                &format!("select {{{{ {}1{} }}}} as x", "(".repeat(n), ")".repeat(n)),
            ),
            (
                "models/b.sql",
                &format!(
                    "{}select 1 as y{}",
                    "{% if true %}".repeat(5_000),
                    "{% endif %}".repeat(5_000)
                ),
            ),
            ("models/c.sql", "select 1 as z"),
            (
                "models/schema.yml",
                &format!("version: 2\nmodels: {}{}\n", "[".repeat(n), "]".repeat(n)),
            ),
        ],
    );
    let out = ripple()
        .args(["check", "--format", "json", "--project"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.code().is_some(),
        "killed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let text = doc.to_string();
    // The rest of the project still loads.
    let g = ripple()
        .args(["graph", "--format", "json", "--project"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&g.stdout).contains("model.c"),
        "{text}"
    );
}

#[test]
fn an_interrupted_diff_removes_its_copies_and_dies_of_the_signal() {
    use std::os::unix::process::ExitStatusExt;
    let files: Vec<(String, String)> = (0..20)
        .map(|i| (format!("models/m{i}.sql"), "select 1 as x".to_string()))
        .chain([(
            "dbt_project.yml".to_string(),
            "name: s\nversion: '1.0'\nprofile: s\n".to_string(),
        )])
        .collect();
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let repo = git_repo::GitRepo::new(&files);
    // A `git` that is slow to hand over the files: the copies exist, and
    // the run is still writing them, when the signal comes, whatever the
    // build's speed (a big project alone was too fast for a release build).
    let real_git = std::process::Command::new("sh")
        .args(["-c", "command -v git"])
        .output()
        .unwrap();
    let real_git = String::from_utf8(real_git.stdout)
        .unwrap()
        .trim()
        .to_string();
    let fake = tempfile::tempdir().unwrap();
    let slow_git = fake.path().join("git");
    std::fs::write(
        &slow_git,
        format!("#!/bin/sh\ncase \"$*\" in *cat-file*) sleep 5;; esac\nexec '{real_git}' \"$@\"\n"),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&slow_git, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!(
        "{}:{}",
        fake.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // SIGXCPU is what a CPU limit (`ulimit -t`) in CI sends.
    let signals = [
        (2, "INT"),
        (15, "TERM"),
        (3, "QUIT"),
        (10, "USR1"),
        (14, "ALRM"),
        (24, "XCPU"),
    ];
    for (signal, name) in signals {
        let tmp = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new(bin())
            .current_dir(repo.path())
            .env("RIPPLE_TMPDIR", tmp.path())
            .env("PATH", &path)
            .args([
                "diff", "--base", "HEAD", "--head", "HEAD", "--format", "json",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let prefix = format!("ripple-rev-{}-", child.id());
        let started = std::time::Instant::now();
        let copy = loop {
            let found = std::fs::read_dir(tmp.path())
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| {
                    p.file_name()
                        .unwrap()
                        .to_string_lossy()
                        .starts_with(&prefix)
                });
            if let Some(copy) = found {
                break copy;
            }
            assert!(
                started.elapsed() < std::time::Duration::from_secs(60),
                "no copy was made"
            );
            std::thread::sleep(std::time::Duration::from_millis(2));
        };
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&copy).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "the copy is readable by others: {mode:o}");
        }
        let sent = std::process::Command::new("kill")
            .args([format!("-{name}"), child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let status = child.wait().unwrap();
        assert_eq!(
            status.signal(),
            Some(signal),
            "SIG{name}: the run ended before it was interrupted ({status:?})"
        );
        let left: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "SIG{name} left {left:?}");
    }
}

#[test]
fn a_post_timeout_past_a_week_is_a_usage_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    for t in ["18446744073709551615", "604801"] {
        let out = ripple()
            .args([
                "graph",
                "--format",
                "openlineage",
                "--post",
                "http://127.0.0.1:9/x",
            ])
            .args(["--post-timeout", t, "--project"])
            .arg(dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{t}: {err}");
        assert!(
            err.contains("--post-timeout") && !err.contains("panicked"),
            "{err}"
        );
    }
}

#[test]
fn a_suggested_plan_command_keeps_a_hostile_name_one_word() {
    let dir = tempfile::tempdir().unwrap();
    let name = "x$(touch pwned) `touch pwned2` 'q'";
    for (side, filter) in [("base", ""), ("head", " where v > 0")] {
        let root = dir.path().join(side);
        std::fs::create_dir_all(root.join("jobs")).unwrap();
        std::fs::write(
            root.join("ripple.yml"),
            "dialect: postgres\nsql: [jobs]\ndatasets:\n  raw.src: {grain: day, start: 2025-01-01, partition_column: d}\n",
        )
        .unwrap();
        std::fs::write(
            root.join("jobs/j.sql"),
            format!(
                "insert into mart.\"{}\" (d, v) select d, v from raw.src{filter};\n",
                name.replace('"', "\"\"")
            ),
        )
        .unwrap();
    }
    let out = ripple()
        .args([
            "diff",
            "--format",
            "json",
            "--fail-on",
            "none",
            "--base-dir",
        ])
        .arg(dir.path().join("base"))
        .arg("--head-dir")
        .arg(dir.path().join("head"))
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let plan = doc["changes"][0]["plan"].as_str().unwrap().to_string();
    // Pasted into a shell with its placeholders filled, the command's
    // words are the name as one word, and nothing runs.
    let filled = plan
        .replace("<first day to restate>", "2026-01-10")
        .replace("<last day to restate>", "2026-01-11")
        .replacen("ripple ", "printf '%s\\n' ", 1);
    let words = std::process::Command::new("bash")
        .arg("-c")
        .arg(&filled)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let words = String::from_utf8_lossy(&words.stdout).to_string();
    assert_eq!(
        words.lines().nth(1),
        Some(format!("mart.\"{name}\"").as_str()),
        "{plan}"
    );
    assert!(!dir.path().join("pwned").exists() && !dir.path().join("pwned2").exists());
}

#[test]
fn a_line_break_in_a_name_cannot_forge_a_line_of_text_output() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[(
            "ripple.yml",
            "dialect: postgres\ndatasets:\n  raw.src: {grain: day, start: 2025-01-01, partition_column: d}\n",
        )],
    );
    write(
        dir.path(),
        &[(
            "dags/d.py",
            "from airflow import DAG\nfrom airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator\nwith DAG('d', schedule='@daily') as dag:\n    a = SQLExecuteQueryOperator(task_id='t\\nFAKE LINE\\r', sql=\"insert into mart.\\\"x\\nFAKE ROW\\\" select d from raw.src where d = '{{ ds }}'\")\n",
        )],
    );
    for args in [
        &["dags"][..],
        &[
            "impact",
            "raw.src",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-11",
            "--as-of",
            "2026-02-01",
            "--format",
            "text",
        ],
    ] {
        let out = ripple()
            .args(args)
            .arg("--project")
            .arg(dir.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("FAKE"), "{args:?}: {text}");
        assert!(
            text.lines().all(|l| !l.starts_with("FAKE")),
            "{args:?}: a name started a line:\n{text}"
        );
    }
}

/// Markdown rendered by markdown-it (CommonMark, GFM tables), from the
/// Airflow venv of `scripts/engines.sh`; `None` where it is not installed
/// (a failure under CI, where it must be).
fn markdown_html(markdown: &str) -> Option<String> {
    let Some(python) = std::env::var_os("RIPPLE_TEST_AIRFLOW_PYTHON") else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "RIPPLE_TEST_AIRFLOW_PYTHON is not set (scripts/engines.sh)"
        );
        return None;
    };
    let out = std::process::Command::new(python)
        .args([
            "-c",
            "import sys\nfrom markdown_it import MarkdownIt\nsys.stdout.write(MarkdownIt('commonmark').enable('table').render(sys.stdin.read()))",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(markdown.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    assert!(out.status.success());
    Some(String::from_utf8(out.stdout).unwrap())
}

#[test]
fn names_in_markdown_stay_code_whatever_backticks_or_fences_they_hold() {
    let dir = tempfile::tempdir().unwrap();
    // Each with its shadow within PostgreSQL's 63 bytes (a longer one
    // refuses the plan, docs/limits.md).
    let names = [
        "a`@octo [c](https://e.x/x) **b** <b>x</b>`b",
        "p|ipe|@octocat",
        "nl\n```\n# H @octo [c](https://e.x/y)\n```sql\n",
        "~~~tilde\n~~~\n@octocat",
    ];
    let tables: Vec<String> = names
        .iter()
        .map(|n| format!("mart.\"{}\"", n.replace('"', "\"\"")))
        .collect();
    restating_project(
        dir.path(),
        &tables.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    for command in ["impact", "plan"] {
        let out = ripple()
            .args([
                command,
                "raw.src",
                "--from",
                "2026-01-10",
                "--to",
                "2026-01-11",
            ])
            .args([
                "--as-of",
                "2026-02-01",
                "--format",
                "markdown",
                "--no-cache",
                "--project",
            ])
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let markdown = String::from_utf8(out.stdout).unwrap();
        let Some(html) = markdown_html(&markdown) else {
            return;
        };
        // Outside code, none of the names' markup is live.
        let mut prose = html.clone();
        while let Some(start) = prose.find("<code") {
            let end = prose[start..]
                .find("</code>")
                .map_or(prose.len(), |e| start + e + 7);
            prose.replace_range(start..end, "");
        }
        for live in ["<a href", "<h1>", "<strong>", "@octo", "<b>"] {
            assert!(
                !prose.contains(live),
                "{command}: `{live}` is live:\n{html}"
            );
        }
    }
}

#[test]
fn output_over_a_file_another_user_owns_keeps_its_owner_and_respects_read_only() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    // As root, the run is made as `nobody` (where setpriv is); as another
    // user, files that user cannot write are what root made, so skip.
    if rustix_euid() != 0 || !std::path::Path::new("/usr/bin/setpriv").exists() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let project = dir.path().join("p");
    std::fs::create_dir_all(project.join("jobs")).unwrap();
    std::fs::write(
        project.join("jobs/a.sql"),
        "create table b as select * from a;\n",
    )
    .unwrap();
    let run_as_nobody = |out: &std::path::Path| {
        std::process::Command::new("/usr/bin/setpriv")
            .args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
            .arg(bin())
            .args(["graph", "--format", "json", "--no-cache", "--project"])
            .arg(&project)
            .arg("--output")
            .arg(out)
            .output()
            .unwrap()
    };
    // Read-only: refused as `>` would refuse it, the file as it was.
    let read_only = dir.path().join("ro.json");
    std::fs::write(&read_only, "old").unwrap();
    std::fs::set_permissions(&read_only, std::fs::Permissions::from_mode(0o444)).unwrap();
    let out = run_as_nobody(&read_only);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("ermission denied"));
    assert_eq!(std::fs::read_to_string(&read_only).unwrap(), "old");
    // Shared (root's, writable by all): written, still root's.
    let shared = dir.path().join("shared.json");
    std::fs::write(&shared, "old").unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o666)).unwrap();
    let out = run_as_nobody(&shared);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m = std::fs::metadata(&shared).unwrap();
    assert_eq!((m.uid(), m.mode() & 0o777), (0, 0o666));
    assert!(
        std::fs::read_to_string(&shared)
            .unwrap()
            .contains("schema_version")
    );
    // Its own file in a folder it may not add to: written in place, as
    // `>` writes it (it was refused: no room for the file beside it).
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    let own = locked.join("report.json");
    std::fs::write(&own, "old").unwrap();
    std::os::unix::fs::chown(&own, Some(65534), Some(65534)).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = run_as_nobody(&own);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        std::fs::read_to_string(&own)
            .unwrap()
            .contains("schema_version")
    );
    assert_eq!(std::fs::read_dir(&locked).unwrap().count(), 1);
    // Its own file shared through a group it is not in (root's, 0640):
    // written in place, the group kept, as `>` keeps it (it was replaced
    // by a file of the writer's group, silently).
    let grouped = dir.path().join("grouped.json");
    std::fs::write(&grouped, "old").unwrap();
    std::os::unix::fs::chown(&grouped, Some(65534), Some(0)).unwrap();
    std::fs::set_permissions(&grouped, std::fs::Permissions::from_mode(0o640)).unwrap();
    let out = run_as_nobody(&grouped);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m = std::fs::metadata(&grouped).unwrap();
    assert_eq!((m.uid(), m.gid(), m.mode() & 0o777), (65534, 0, 0o640));
    assert!(
        std::fs::read_to_string(&grouped)
            .unwrap()
            .contains("schema_version")
    );
}

/// This process's effective user id.
fn rustix_euid() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .and_then(|l| l.split_whitespace().nth(2))
        .and_then(|u| u.parse().ok())
        .unwrap_or(u32::MAX)
}

#[test]
fn dates_past_the_year_4000_are_refused_not_moved() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[("jobs/a.sql", "create table b as select * from a;\n")],
    );
    for args in [
        &["impact", "a", "--from", "2026-01-10", "--to", "9999-12-31"][..],
        &[
            "plan",
            "a",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-11",
            "--start",
            "9999-12-31T23",
        ],
    ] {
        let out = ripple()
            .args(args)
            .arg("--project")
            .arg(dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("9999-12-31") && err.contains("4000"), "{err}");
    }
}

#[test]
fn columns_the_changed_table_does_not_have_are_refused_not_left_out() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[(
            "jobs/b.sql",
            "create table b as select d, amount_cents, customer_id from a;\n",
        )],
    );
    write(
        dir.path(),
        &[(
            "jobs/c.sql",
            "create table c as select d, sum(amount_cents) as total from b group by d;\n",
        )],
    );
    let impact = |columns: &str| {
        ripple()
            .args(["impact", "b", "--from", "2026-01-10", "--to", "2026-01-11"])
            .args(["--as-of", "2026-02-01", "--columns", columns, "--project"])
            .arg(dir.path())
            .output()
            .unwrap()
    };
    let ok = impact("amount_cents");
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    for (typo, says) in [
        ("amount", "`amount` is not a column of `b`"),
        ("", "empty column name"),
    ] {
        let out = impact(typo);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{typo:?}: {err}");
        assert!(err.contains(says) && err.contains("--columns"), "{err}");
    }
}

#[test]
fn names_that_sanitise_alike_get_distinct_airflow_task_ids() {
    let dir = tempfile::tempdir().unwrap();
    restating_project(dir.path(), &["mart.\"m|pipe\"", "mart.m_pipe"]);
    let out = ripple()
        .args([
            "plan",
            "raw.src",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-11",
        ])
        .args([
            "--as-of",
            "2026-02-01",
            "--format",
            "airflow-dag",
            "--no-cache",
            "--project",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dag = String::from_utf8(out.stdout).unwrap();
    let ids: Vec<&str> = dag
        .match_indices("task_id=\"")
        .map(|(at, m)| {
            let rest = &dag[at + m.len()..];
            &rest[..rest.find('"').unwrap()]
        })
        .collect();
    let unique: std::collections::BTreeSet<&&str> = ids.iter().collect();
    assert!(ids.len() >= 4, "{dag}");
    assert_eq!(unique.len(), ids.len(), "a task id twice: {ids:?}");
}

#[test]
fn a_column_named_by_a_huge_expression_is_listed_not_a_panic() {
    // Its name, the expression, is wider than `{:<width$}` allows.
    let dir = tempfile::tempdir().unwrap();
    let sql = dir.path().join("big.sql");
    let branches: String = (0..8000)
        .map(|i| format!(" when x = {i} then {i}"))
        .collect();
    std::fs::write(&sql, format!("select case{branches} end from t")).unwrap();
    let out = ripple()
        .args(["lineage", "--columns"])
        .arg(&sql)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("<- t.x"));
}

#[test]
fn a_dbt_schema_or_alias_with_a_dot_or_quote_is_addressed_as_one_part() {
    // `schema='a.b'` once made the plan delete from `"analytics_a"."b".m`,
    // and `schema='fin"ance'` from one identifier in the current schema.
    let cases = [
        ("schema='a.b'", "\"analytics_a.b\".\"m\""),
        ("schema='fin\"ance'", "\"analytics_fin\"\"ance\".\"m\""),
        ("alias='od.x'", "\"analytics\".\"od.x\""),
        ("alias='od\"x'", "\"analytics\".\"od\"\"x\""),
    ];
    for (config, table) in cases {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            &[
                (
                    "dbt_project.yml",
                    "name: p\nversion: '1.0'\nprofile: p\nmodel-paths: [models]\n",
                ),
                (
                    "ripple.yml",
                    "dialect: postgres\ndatasets:\n  raw.orders:\n    grain: day\n    start: 2025-01-01\n    partition_column: d\n  m:\n    grain: day\n    start: 2025-01-01\n",
                ),
                (
                    "models/sources.yml",
                    "version: 2\nsources:\n  - name: raw\n    schema: raw\n    tables:\n      - name: orders\n",
                ),
                (
                    "models/m.sql",
                    &format!(
                        "{{{{ config({config}, materialized='table') }}}}\nselect d, count(*) as n from {{{{ source('raw', 'orders') }}}} group by d"
                    ),
                ),
            ],
        );
        let out = ripple()
            .args([
                "plan",
                "raw.orders",
                "--from",
                "2026-01-10",
                "--to",
                "2026-01-11",
                "--as-of",
                "2026-02-01",
                "--format",
                "shell",
                "--no-cache",
                "--project",
            ])
            .arg(dir.path())
            .output()
            .unwrap();
        let script = String::from_utf8_lossy(&out.stdout);
        assert!(
            script.contains(&format!("delete from {table} where")),
            "{config}: {script}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn a_line_break_in_a_name_never_starts_a_line_of_text_output() {
    // `lineage` and `plan --format text` printed `"nl<LF>x"` raw: a name
    // could forge rows of the statement table or plan lines.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            (
                "ripple.yml",
                "dialect: postgres\nsql: [jobs]\ndatasets:\n  raw.src:\n    grain: day\n    start: 2025-01-01\n    partition_column: d\n",
            ),
            (
                "jobs/j.sql",
                "insert into s.\"nl\nx\" select d from raw.src;\ninsert into s.\"p\u{2028}q\" select d from s.\"nl\nx\";\n",
            ),
        ],
    );
    let run = |args: &[&str]| {
        let out = ripple()
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
    };
    for text in [
        run(&[
            "lineage",
            "jobs/j.sql",
            "--dialect",
            "postgres",
            "--columns",
        ]),
        run(&[
            "plan",
            "raw.src",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-11",
            "--as-of",
            "2026-02-01",
            "--format",
            "text",
        ]),
    ] {
        assert!(
            !text.contains("nl\nx") && !text.contains('\u{2028}'),
            "{text}"
        );
        assert!(
            text.contains("nl\\nx") && text.contains("p\\u{2028}q"),
            "{text}"
        );
    }
    // A DAG id with a line break, in `schedule`'s text.
    write(
        dir.path(),
        &[(
            "dags/d.py",
            "from airflow import DAG\nwith DAG(\"nl\\nx\", schedule=\"0 2 * * *\") as d:\n    pass\n",
        )],
    );
    let text = run(&["schedule", "--from", "2026-01-10", "--to", "2026-01-11"]);
    assert!(text.contains("nl\\nx") && !text.contains("nl\nx"), "{text}");
}

#[test]
fn a_folder_ripple_yml_names_that_is_missing_is_an_error() {
    // `sql: [sqll]` (a typo) once read nothing with exit 0, and impact
    // left out what the real folder's jobs write.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            (
                "ripple.yml",
                "dialect: postgres\nsql: [sqll]\ndags: [airflow_dags]\n",
            ),
            ("sql/j.sql", "insert into mart.t select * from raw.s;"),
        ],
    );
    let findings = check_json(dir.path());
    for (key, path) in [("sql", "sqll"), ("dags", "airflow_dags")] {
        assert!(
            findings
                .iter()
                .any(|f| f.contains("missing-path")
                    && f.contains(&format!("`{key}` names `{path}`"))),
            "{findings:#?}"
        );
    }
    // Once the folder is there, it is read and the error gone.
    write(
        dir.path(),
        &[("ripple.yml", "dialect: postgres\nsql: [sql]\n")],
    );
    assert!(
        !check_json(dir.path())
            .iter()
            .any(|f| f.contains("missing-path")),
        "{:#?}",
        check_json(dir.path())
    );
}

#[test]
fn a_var_whose_jinja_does_not_render_fails_the_models_reading_it() {
    // dbt renders a var's Jinja where a model reads it; one ripple could
    // not render once reached models as written, the `{{ ... }}` text in
    // their SQL, with `check` saying every model rendered fully.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            (
                "dbt_project.yml",
                "name: p\nversion: '1.0'\nprofile: p\nvars:\n  fine: \"{{ 'x' ~ 'y' }}\"\n  start: \"{{ nope_fn() }}\"\n",
            ),
            ("ripple.yml", "vars:\n  'late': \"{{ 1 / 0 }}\"\n"),
            ("models/m1.sql", "select '{{ var(\"start\") }}' as s"),
            ("models/m2.sql", "select '{{ var(\"late\") }}' as l"),
            ("models/m3.sql", "select '{{ var(\"fine\") }}' as f"),
        ],
    );
    let findings = check_json(dir.path());
    let about = |model: &str| {
        findings
            .iter()
            .find(|f| f.contains(&format!("models/{model}.sql")) && f.contains("render-error"))
            .cloned()
    };
    let m1 = about("m1").unwrap_or_else(|| panic!("{findings:#?}"));
    assert!(m1.contains("var `start`"), "{m1}");
    let m2 = about("m2").unwrap_or_else(|| panic!("{findings:#?}"));
    assert!(m2.contains("var `late`"), "{m2}");
    assert!(about("m3").is_none(), "{findings:#?}");
}

#[test]
fn output_to_a_link_to_a_stream_of_ours_writes_the_stream() {
    // `-o /dev/stdout` replaced the system's link with a file (as root) and
    // the output never reached standard output, with exit 0. Tested on a
    // link of our own to the same place, which the machine does not need.
    let dir = tempfile::tempdir().unwrap();
    // Every spelling of the way there: relative, with `.` and `//`, and a
    // link to a link (each was once replaced, the output lost).
    let depth = dir.path().components().count() - 1;
    let relative = format!("{}dev/stdout", "../".repeat(depth));
    std::os::unix::fs::symlink("/dev/stdout", dir.path().join("so")).unwrap();
    for target in [
        "/proc/self/fd/1",
        "/dev/stdout",
        relative.as_str(),
        "/dev/./stdout",
        "//dev/stdout",
        "so",
    ] {
        let link = dir.path().join("out");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(target, &link).unwrap();
        let out = graph_to(&link);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{target}: {e}: {:?}", out.stdout));
        assert!(doc["nodes"].as_array().is_some_and(|n| !n.is_empty()));
        let m = std::fs::symlink_metadata(&link).unwrap();
        assert!(
            m.file_type().is_symlink(),
            "{target}: the link was replaced"
        );
    }
    // The link named from its own folder (`-o out`) with a relative
    // target: the target was read from nowhere and the link replaced.
    let link = dir.path().join("out");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&relative, &link).unwrap();
    let shop = std::fs::canonicalize("fixtures/shop").unwrap();
    let out = ripple()
        .current_dir(dir.path())
        .args(["graph", "--format", "json", "--output", "out", "--project"])
        .arg(&shop)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["nodes"].as_array().is_some_and(|n| !n.is_empty()));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn an_error_naming_a_file_with_a_line_break_stays_one_line() {
    // The refusal printed the name raw: a forged `ripple: plan written`
    // line appeared on its own.
    let dir = tempfile::tempdir().unwrap();
    temp_project::copy_tree(Path::new("fixtures/backfill_dbt"), dir.path());
    std::fs::write(
        dir.path()
            .join("models/x\nripple: plan written, 0 problems.sql"),
        "{{ config(materialized='table') }}\nselect * from {{ ref('orders_daily') }}\n",
    )
    .unwrap();
    let out = std::process::Command::new(bin())
        .args([
            "plan",
            "raw.orders",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-11",
        ])
        .args([
            "--as-of",
            "2026-02-01",
            "--executor",
            "dbt",
            "--format",
            "shell",
            "--project",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("x\\nripple: plan written"), "{err}");
    assert!(
        !err.lines().any(|l| l.starts_with("ripple: plan written")),
        "{err}"
    );
}

/// A named pipe nothing writes to, where ripple reads a file (a model the
/// warm cache knew, `tables:`, a file given on the command line), is read
/// as it is at once: opening it waited for a writer forever. A pipe with a
/// writer (`<(...)`) is still read whole.
#[test]
fn a_named_pipe_with_no_writer_never_hangs_a_read() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        &[
            (
                "ripple.yml",
                "dialect: postgres\nmodels: [jobs]\ntables: [facts.jsonl]\n",
            ),
            ("jobs/a.sql", "insert into mart.a select * from raw.x;\n"),
            ("jobs/b.sql", "insert into mart.b select * from mart.a;\n"),
            ("facts.jsonl", ""),
        ],
    );
    let mkfifo = |p: &Path| {
        std::fs::remove_file(p).unwrap();
        assert!(
            std::process::Command::new("mkfifo")
                .arg(p)
                .status()
                .unwrap()
                .success()
        );
    };
    let run = |args: &[&str]| {
        let mut child = std::process::Command::new(bin())
            .args(args)
            .arg("--project")
            .arg(root)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                child.kill().unwrap();
                panic!("ripple {args:?} hung on a named pipe");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        child.wait_with_output().unwrap()
    };
    // Warm: the cache knew `a.sql` as a file.
    assert!(run(&["graph", "--format", "json"]).status.success());
    mkfifo(&root.join("jobs/a.sql"));
    mkfifo(&root.join("facts.jsonl"));
    let warm = run(&["graph", "--format", "json"]);
    let cold = run(&["graph", "--format", "json", "--no-cache"]);
    assert_eq!(warm.stdout, cold.stdout);
    assert!(run(&["check"]).status.code().is_some());
    // A pipe that has a writer is read whole.
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "{} lineage --format json <(printf 'insert into t select * from s;')",
            bin().display()
        ))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"t\""));
}

#[test]
fn a_ripple_yml_that_is_no_file_and_a_deleted_working_folder_are_errors() {
    // Both read as "no config" / an empty project, with exit 0: the impact
    // silently lost every setting, `check` said 0 errors.
    let dir = tempfile::tempdir().unwrap();
    temp_project::copy_tree(Path::new("fixtures/shop"), dir.path());
    std::fs::remove_file(dir.path().join("ripple.yml")).unwrap();
    std::os::unix::fs::symlink("../shared/ripple.yml", dir.path().join("ripple.yml")).unwrap();
    let out = ripple()
        .args(["check", "--no-cache", "--project"])
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("ripple.yml") && err.contains("a link to nothing"),
        "{err}"
    );
    std::fs::remove_file(dir.path().join("ripple.yml")).unwrap();
    std::fs::create_dir(dir.path().join("ripple.yml")).unwrap();
    let out = ripple()
        .args(["check", "--no-cache", "--project"])
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("a folder"), "{err}");
    // Run from a folder deleted under it.
    let base = tempfile::tempdir().unwrap();
    let path = base.path().join("gone");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(r#"mkdir -p "$1" && cd "$1" && rmdir "$1" && exec "$2" check --no-cache --project ."#)
        .args(["sh"])
        .arg(&path)
        .arg(bin())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("deleted"), "{err}");
}

#[test]
fn messages_say_what_is_wrong_in_the_user_s_words_not_the_libraries() {
    // Round 9 found serde's, serde-saphyr's and the system's own wording in
    // messages: `(os error 2)`, "at line 1 column 108", "a tuple of size
    // 2", "rejected by the configured policy", key paths ending in `?`, a
    // too large number called "not a whole number", a big schema called an
    // alias bomb.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    restating_project(root, &["mart.daily"]);
    let base = std::fs::read_to_string(root.join("ripple.yml")).unwrap();
    let run = |args: &[&str]| {
        let out = ripple().args(args).current_dir(root).output().unwrap();
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let plan = [
        "plan",
        "raw.src",
        "--from",
        "2025-01-10",
        "--to",
        "2025-01-10",
        "--as-of",
        "2025-02-01",
        "--no-cache",
        "--project",
        ".",
    ];
    let mut said = Vec::new();
    let cases = [
        (
            "tables: [t.jsonl]\n",
            r#"{"schema":"mart","name":"x","kind":"table","triggers":[{"name":"t"}]}"#,
            "t.jsonl:1:",
        ),
        (
            "tables: [t.jsonl]\n",
            r#"{"schema":"mart","name":"x","kind":"view","reads":["raw.src"]}"#,
            "[schema, name] pair",
        ),
        (
            "backfill: { checks: { row_count: .nan } }\n",
            "",
            "expected a number",
        ),
        (
            "backfill: { batch: { day: 4294967297 } }\n",
            "",
            "from 0 to 4294967295",
        ),
        (
            "dialect: postgres\n",
            "",
            "the key `dialect` is written twice",
        ),
    ];
    for (extra, facts, expected) in cases {
        std::fs::write(root.join("ripple.yml"), format!("{base}{extra}")).unwrap();
        std::fs::write(root.join("t.jsonl"), facts).unwrap();
        let err = run(&plan);
        assert!(err.contains(expected), "{extra}: {err}");
        said.push(err);
    }
    std::fs::write(root.join("ripple.yml"), &base).unwrap();
    said.push(run(&[
        "impact",
        "raw.src",
        "--from",
        "2025-01-10",
        "--to",
        "2025-01-10",
        "--as-of",
        "2025-02-01",
        "--project",
        ".",
        "--cache-dir",
        "/proc/1/nope",
    ]));
    assert!(
        said.last().unwrap().contains("could not be written"),
        "{said:?}"
    );
    // A JSON schema of more columns than one YAML file may expand to.
    let columns: Vec<String> = (0..2_100_000).map(|i| format!("\"c{i}\"")).collect();
    std::fs::write(
        root.join("wide.json"),
        format!("{{\"sales.orders\": [{}]}}", columns.join(",")),
    )
    .unwrap();
    std::fs::write(root.join("q.sql"), "select c7 from sales.orders").unwrap();
    let out = ripple()
        .args(["lineage", "q.sql", "--schema", "wide.json"])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for err in &said {
        for internal in [
            "os error",
            " at line ",
            "tuple of size",
            "configured policy",
            ".?",
            ": ?:",
            "alias",
        ] {
            assert!(!err.contains(internal), "`{internal}` in: {err}");
        }
    }
}

#[test]
fn output_keeps_a_files_acl_and_extended_attributes() {
    // `-o out` over a file with a POSIX ACL (a named user may read) and a
    // `user.` attribute replaced it by a file with neither: the mode's
    // group bits, the ACL's mask until then, then said who reads it.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.dot");
    std::fs::write(&out, "old").unwrap();
    let py = |code: &str| {
        let o = std::process::Command::new("python3")
            .args(["-c", code])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    // user::rw- user:4242:rw- group::--- mask::rw- other::---
    py("import os, struct, sys
e = lambda tag, perm, id=0xffffffff: struct.pack('<HHI', tag, perm, id)
acl = struct.pack('<I', 2) + e(1, 6) + e(2, 6, 4242) + e(4, 0) + e(0x10, 6) + e(0x20, 0)
os.setxattr(sys.argv[1], 'system.posix_acl_access', acl)
os.setxattr(sys.argv[1], 'user.note', b'kept')");
    let list = "import os, sys
p = sys.argv[1]
for n in sorted(os.listxattr(p)): print(n, os.getxattr(p, n).hex())";
    let before = py(list);
    assert!(before.contains("system.posix_acl_access") && before.contains("user.note"));
    let o = ripple()
        .args([
            "graph",
            "--format",
            "dot",
            "--project",
            "fixtures/shop",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read_to_string(&out).unwrap().contains("digraph"));
    assert_eq!(py(list), before);
}

#[test]
fn file_names_that_are_not_text_are_named_with_their_bytes_and_left_out() {
    // `a\xff.sql` and `a\xfe.sql` both read as `a�.sql`: one model took the
    // other's name and was lost without a word from `graph`.
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        &[
            (
                "dbt_project.yml",
                "name: p\nversion: '1'\nconfig-version: 2\nprofile: p\nmodel-paths: [models]\n",
            ),
            ("models/b.sql", "select 1 as x"),
        ],
    );
    for byte in [0xfe_u8, 0xff] {
        let bytes = [b'a', byte, b'.', b's', b'q', b'l'];
        let name = std::ffi::OsStr::from_bytes(&bytes);
        std::fs::write(root.join("models").join(name), "select 2 as x").unwrap();
    }
    let out = ripple()
        .args(["check", "--no-cache", "--project"])
        .arg(root)
        .output()
        .unwrap();
    let err = both(&out);
    assert!(!out.status.success(), "{err}");
    for shown in ["models/a\\xFE.sql", "models/a\\xFF.sql"] {
        assert!(err.contains(shown), "{shown}: {err}");
    }
    assert!(!err.contains("duplicate"), "{err}");
}

#[test]
fn a_settings_file_linked_out_of_the_repository_is_refused() {
    // A pull request can commit `ripple.yml -> /etc/passwd` or a
    // `dbt_project.yml` linked to another checkout: both were read (and
    // quoted in errors).
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path();
    write(
        top,
        &[
            (
                "elsewhere/dbt_project.yml",
                "name: p\nversion: '1'\nconfig-version: 2\nprofile: p\nmodel-paths: [models]\n",
            ),
            ("elsewhere/ripple.yml", "dialect: postgres\n"),
            ("repo/.git/HEAD", "ref: refs/heads/main\n"),
            ("repo/p/models/m.sql", "select 1 as x"),
            ("repo/shared/ripple.yml", "dialect: postgres\n"),
        ],
    );
    let project = top.join("repo/p");
    let check = || {
        let out = ripple()
            .args(["check", "--no-cache", "--project"])
            .arg(&project)
            .output()
            .unwrap();
        both(&out)
    };
    std::os::unix::fs::symlink(
        top.join("elsewhere/dbt_project.yml"),
        project.join("dbt_project.yml"),
    )
    .unwrap();
    let said = check();
    assert!(
        said.contains("dbt_project.yml: it is a link to")
            && said.contains("outside the repository"),
        "{said}"
    );
    std::fs::remove_file(project.join("dbt_project.yml")).unwrap();
    std::fs::copy(
        top.join("elsewhere/dbt_project.yml"),
        project.join("dbt_project.yml"),
    )
    .unwrap();
    std::os::unix::fs::symlink(top.join("elsewhere/ripple.yml"), project.join("ripple.yml"))
        .unwrap();
    let said = check();
    assert!(said.contains("ripple.yml: it is a link to"), "{said}");
    // A link inside the repository (a monorepo's shared settings) is read.
    std::fs::remove_file(project.join("ripple.yml")).unwrap();
    std::os::unix::fs::symlink("../shared/ripple.yml", project.join("ripple.yml")).unwrap();
    let said = check();
    assert!(!said.contains("link"), "{said}");
}

#[test]
fn output_dash_is_standard_output() {
    // `-o -` wrote a file named `-` in the working folder and printed
    // nothing: every Unix tool reads `-` as standard output.
    let dir = tempfile::tempdir().unwrap();
    let shop = std::fs::canonicalize("fixtures/shop").unwrap();
    for cmd in [
        vec!["graph", "--format", "json"],
        vec![
            "impact",
            "raw.orders",
            "--from",
            "2026-01-10",
            "--to",
            "2026-01-10",
            "--format",
            "json",
        ],
    ] {
        let out = ripple()
            .current_dir(dir.path())
            .args(&cmd)
            .args(["--output", "-", "--project"])
            .arg(&shop)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{cmd:?}: {e}: {:?}", out.stdout));
        assert!(doc.is_object(), "{cmd:?}");
        assert!(!dir.path().join("-").exists(), "{cmd:?} wrote a file `-`");
    }
}

#[test]
fn a_dbt_alias_that_does_not_render_names_no_table() {
    // `+alias: "{{ nosuch.thing }}"` printed nothing: the model's relation
    // was `main.` and a plan addressed `"main".""` (dbt refuses it). With
    // `modules` it was kept as written, with no warning.
    for (alias, relation, refused) in [
        ("{{ nosuch.thing }}", None, true),
        ("{{ target.nosuch }}", None, true),
        ("{{ modules.re.sub('a', 'b', 'aa') }}", Some("bb"), false),
    ] {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            &[
                (
                    "dbt_project.yml",
                    &format!(
                        "name: p\nversion: '1.0'\nprofile: p\nmodels:\n  p:\n    m:\n      +alias: \"{alias}\"\n"
                    ),
                ),
                ("ripple.yml", "dialect: postgres\n"),
                ("models/m.sql", "select 1 as x\n"),
            ],
        );
        let project = load_project(dir.path(), &LoadOptions::default()).unwrap();
        let m = project.datasets.iter().find(|d| d.id == "model.m").unwrap();
        let errors: Vec<&Diagnostic> = project
            .diagnostics
            .iter()
            .filter(|d| d.code == "render-error" && d.file.as_deref() == Some("models/m.sql"))
            .collect();
        assert_eq!(!errors.is_empty(), refused, "{alias}: {errors:?}");
        if let Some(r) = relation {
            assert_eq!(m.relation.rsplit('.').next(), Some(r), "{alias}");
        } else {
            assert!(
                errors[0].message.contains("did not render to a name"),
                "{errors:?}"
            );
        }
    }
}

#[test]
fn files_dbt_never_reads_are_no_models() {
    // dbt reads `[!.#~]*.sql`: `#f.sql` was a model of ripple's alone, and
    // the dbt executor's `--select 'path:models/#f.sql'` selected nothing,
    // with dbt's exit 0.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            ("dbt_project.yml", "name: p\nversion: '1.0'\nprofile: p\n"),
            ("ripple.yml", "dialect: duckdb\n"),
            ("models/a.sql", "select 1 as x\n"),
            ("models/#f.sql", "select * from {{ ref('a') }}\n"),
            ("models/~g.sql", "select * from {{ ref('a') }}\n"),
            ("models/.h.sql", "select * from {{ ref('a') }}\n"),
        ],
    );
    let project = load_project(dir.path(), &LoadOptions::default()).unwrap();
    let ids: Vec<&str> = project.datasets.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, ["model.a"]);
}

/// Values that share their parts (`[a, a]` nested sixty times) are
/// exponential to walk: comparing, sorting or hashing two of them ran for
/// hours on a 2 KB model (comparisons were charged no fuel), in a dbt
/// model and in an Airflow SQL template alike. Each is refused now, and
/// the models beside it read.
#[test]
fn comparing_values_that_share_their_parts_is_refused_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut tree = String::from("{% set a = [1] %}{% set b = [1] %}");
    for _ in 0..60 {
        tree.push_str("{% set a = [a, a] %}{% set b = [b, b] %}");
    }
    // Just small enough to measure: walked in a loop, each walk is paid.
    let mut small = String::from("{% set a = [1] %}{% set b = [1] %}");
    for _ in 0..20 {
        small.push_str("{% set a = [a, a] %}{% set b = [b, b] %}");
    }
    let forms = [
        (&tree, "{{ a == b }}"),
        (&tree, "{{ a < b }}"),
        (&tree, "{{ [a, b]|sort }}"),
        (&tree, "{{ [a, b]|unique|list }}"),
        (&tree, "{{ [a]|select('equalto', b)|list }}"),
        (&tree, "{% if a != b %}x{% endif %}"),
        (
            &tree,
            "{% for x in [a, b] %}{% if loop.changed(x) %}{% endif %}{% endfor %}",
        ),
        (&tree, "{% set d = {a: 1} %}"),
        (
            &small,
            "{% for i in range(100) %}{% if a == b %}{% endif %}{% endfor %}",
        ),
        (
            &small,
            "{% for i in range(100) %}{% if a in [b] %}{% endif %}{% endfor %}",
        ),
        (
            &small,
            "{% for i in range(100) %}{{ [a, b]|unique|list|length }}{% endfor %}",
        ),
    ];
    let mut files: Vec<(String, String)> = forms
        .iter()
        .enumerate()
        .map(|(i, (t, f))| {
            (
                format!("models/m{i}.sql"),
                format!("{t}{f}\nselect 1 as x from {{{{ ref('base') }}}}\n"),
            )
        })
        .collect();
    files.push(("models/base.sql".into(), "select 1 as x\n".into()));
    files.push((
        "dbt_project.yml".into(),
        "name: j\nversion: \"1.0\"\nprofile: j\nmodel-paths: [\"models\"]\n".into(),
    ));
    files.push((
        "dags/d.py".into(),
        format!(
            "from datetime import datetime\nfrom airflow import DAG\nfrom airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator\nwith DAG(dag_id=\"d\", schedule=\"@daily\", start_date=datetime(2026, 1, 1)) as dag:\n    t = SQLExecuteQueryOperator(task_id=\"t\", conn_id=\"w\", sql=\"\"\"{tree}{{{{ a == b }}}} insert into m.x select * from m.y\"\"\")\n"
        ),
    ));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    write(root, &refs);
    let run = |args: &[&str]| {
        let mut child = std::process::Command::new(bin())
            .args(args)
            .arg("--project")
            .arg(root)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                child.kill().unwrap();
                panic!("ripple {args:?} still comparing after 120 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        child.wait_with_output().unwrap()
    };
    let said = |out: std::process::Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    let err = said(run(&["check", "--no-cache"]));
    for i in 0..forms.len() {
        let line = err
            .lines()
            .find(|l| l.contains(&format!("models/m{i}.sql")))
            .unwrap_or_else(|| panic!("m{i} not reported: {err}"));
        assert!(line.contains("render-error"), "{line}");
    }
    let err = said(run(&["dags", "--format", "json"]));
    assert!(
        err.contains("dags/d.py") && err.contains("a comparison would print"),
        "{err}"
    );
}

/// `ripple tables` run away from the project said "ripple reads no
/// catalog of generic"; it now says which folder it read and how to name
/// the project or the engine.
#[test]
fn tables_away_from_a_project_says_to_name_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(bin())
        .arg("tables")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("holds no ripple.yml") && err.contains("--project DIR"),
        "{err}"
    );
    let out = std::process::Command::new(bin())
        .args(["tables", "--dialect", "postgres"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    write(dir.path(), &[("ripple.yml", "dialect: snowflake\n")]);
    let out = std::process::Command::new(bin())
        .arg("tables")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("reads no catalog of snowflake"), "{err}");
}
