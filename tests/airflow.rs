//! Airflow DAG files: every declaration, task and dependency form ripple
//! reads, what it refuses to guess (warnings, partial results), the checks,
//! and proof that a DAG file is never executed.

use std::path::Path;

use ripple::graph::LineageGraph;
use ripple::ingest::{LoadOptions, load_project, read_dags};
use ripple::project::Diagnostic;
use ripple::project::{Dag, Task};
use ripple::sql::SqlDialect;

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

fn task<'a>(dag: &'a Dag, id: &str) -> &'a Task {
    dag.tasks
        .iter()
        .find(|t| t.task_id == id)
        .unwrap_or_else(|| panic!("no task {id} in {:?}", dag.tasks))
}

const HEADER: &str = "from airflow import DAG\nfrom airflow.decorators import dag, task\nfrom airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator as SQL\n";

#[test]
fn the_three_ways_to_declare_a_dag() {
    let (dags, warnings) = read(&[(
        "a.py",
        &format!(
            "{HEADER}with DAG('with_dag', schedule='30 2 * * *', catchup=False, max_active_runs=2, tags=['x']) as d:\n    t = SQL(task_id='t', sql='select 1')\n\nassigned = DAG(dag_id='assigned', schedule_interval='@daily')\nu = SQL(task_id='u', sql='select 1', dag=assigned)\n\n@dag(schedule=None)\ndef decorated():\n    SQL(task_id='v', sql='select 1')\n\ndecorated()\n"
        ),
    )]);
    assert!(warnings.is_empty(), "{warnings:?}");
    let ids: Vec<&str> = dags.iter().map(|d| d.dag_id.as_str()).collect();
    assert_eq!(ids, ["assigned", "decorated", "with_dag"]);
    assert_eq!(dags[2].schedule.as_deref(), Some("30 2 * * *"));
    assert_eq!(dags[2].catchup, Some(false));
    assert_eq!(dags[2].max_active_runs, Some(2));
    assert_eq!(dags[0].schedule.as_deref(), Some("@daily"));
    assert_eq!(dags[1].schedule.as_deref(), Some("None"));
    assert_eq!(dags[0].tasks[0].task_id, "u");
    assert_eq!(dags[1].tasks[0].task_id, "v");
}

#[test]
fn schedules_are_kept_as_written() {
    let (dags, _) = read(&[(
        "s.py",
        &format!(
            "{HEADER}from datetime import timedelta\nfrom airflow.datasets import Dataset\nDAG('td', schedule=timedelta(hours=1))\nDAG('ds', schedule=[Dataset('s3://b/orders')])\nCRON = '15 * * * *'\nDAG('var', schedule=CRON)\n"
        ),
    )]);
    let by: std::collections::BTreeMap<&str, Option<&str>> = dags
        .iter()
        .map(|d| (d.dag_id.as_str(), d.schedule.as_deref()))
        .collect();
    assert_eq!(by["td"], Some("timedelta(hours=1)"));
    assert_eq!(by["ds"], Some("datasets"));
    assert_eq!(by["var"], Some("15 * * * *"));
}

#[test]
fn sql_in_every_form_is_read_and_rendered() {
    let (dags, warnings) = read(&[
        (
            "sql_forms.py",
            &format!(
                "{HEADER}with DAG('d', template_searchpath=['queries'], default_args={{'pool': 'wh', 'depends_on_past': True}}, params={{'schema': 'mart'}}) as d:\n    a = SQL(task_id='literal', sql='insert into {{{{ params.schema }}}}.a select * from raw.a where d = {{{{ ds }}}}')\n    b = SQL(task_id='triple', depends_on_past=False, pool_slots=2, sql=\"\"\"\n        insert into mart.b\n        select * from raw.b\n    \"\"\")\n    c = SQL(task_id='list', sql=['delete from mart.c', 'insert into mart.c select * from raw.c'], pool='heavy')\n    e = SQL(task_id='file', sql='load_e.sql')\n    f = SQL(task_id='searchpath', sql='load_f.sql')\n"
            ),
        ),
        (
            "load_e.sql",
            "insert into mart.e select * from raw.e where d = '{{ macros.ds_add(ds, 1) }}'",
        ),
        (
            "queries/load_f.sql",
            "insert into mart.f select * from raw.f",
        ),
    ]);
    assert!(warnings.is_empty(), "{warnings:?}");
    let d = &dags[0];
    let lineage = |id: &str| (task(d, id).reads.clone(), task(d, id).writes.clone());
    assert_eq!(
        lineage("literal"),
        (vec!["raw.a".to_string()], vec!["mart.a".to_string()])
    );
    assert_eq!(
        lineage("triple"),
        (vec!["raw.b".to_string()], vec!["mart.b".to_string()])
    );
    assert_eq!(
        lineage("list"),
        (vec!["raw.c".to_string()], vec!["mart.c".to_string()])
    );
    assert_eq!(
        lineage("file"),
        (vec!["raw.e".to_string()], vec!["mart.e".to_string()])
    );
    assert_eq!(
        lineage("searchpath"),
        (vec!["raw.f".to_string()], vec!["mart.f".to_string()])
    );
    assert_eq!(task(d, "literal").pool.as_deref(), Some("wh"));
    assert!(task(d, "literal").depends_on_past);
    assert!(!task(d, "triple").depends_on_past);
    assert_eq!(task(d, "list").pool.as_deref(), Some("heavy"));
}

#[test]
fn names_built_with_plus_and_plus_equals_are_followed() {
    // `t += "_v2"` was ignored: the task was read as reading `raw.a`, with
    // no warning. A name given an unknown value is no longer its old one.
    let (dags, warnings) = read(&[(
        "plus.py",
        &format!(
            "{HEADER}import os
t = 'raw.a'
t += '_v2'
u = 'raw.' + 'b'
w = 'raw.c'
w += os.environ['SUFFIX']
with DAG('d') as d:
    SQL(task_id='aug', sql=f'insert into mart.x select * from {{t}}')
    SQL(task_id='plus', sql='insert into mart.y select * from ' + u)
    SQL(task_id='unknown', sql=f'insert into mart.z select * from {{w}}')
"
        ),
    )]);
    let d = &dags[0];
    assert_eq!(task(d, "aug").reads, ["raw.a_v2"]);
    assert_eq!(task(d, "plus").reads, ["raw.b"]);
    assert!(task(d, "unknown").reads.is_empty());
    assert!(
        warnings
            .iter()
            .any(|w| w.message.contains("runtime values") && w.line == 13),
        "{warnings:?}"
    );
}

#[test]
fn a_name_an_if_rebinds_is_the_branch_that_runs_or_unknown() {
    // `if False: t = "mart.never"` left `t` naming it (review round 21): the
    // production table was dropped from the graph, with no warning.
    let (dags, warnings) = read(&[(
        "ifs.py",
        &format!(
            "{HEADER}import os\nENV = os.environ.get('E', 'dev')\nsrc = 'raw.orders'\nif ENV != 'prod':\n    src = 'raw.sample'\ntgt = 'mart.daily'\nif False:\n    tgt = 'mart.never'\nDEBUG = False\naudit = 'raw.audit'\nif DEBUG:\n    audit = 'raw.audit_debug'\nelif not DEBUG:\n    audit = 'raw.audit_v2'\nwith DAG('d') as d:\n    SQL(task_id='a', sql=f'insert into {{tgt}} select * from raw.x')\n    SQL(task_id='b', sql=f'insert into mart.audit select * from {{audit}}')\n    SQL(task_id='c', sql=f'insert into mart.c select * from {{src}}')\n"
        ),
    )]);
    let d = &dags[0];
    assert_eq!(task(d, "a").writes, ["mart.daily"]);
    assert_eq!(task(d, "b").reads, ["raw.audit_v2"]);
    assert!(task(d, "c").reads.is_empty());
    assert!(
        warnings
            .iter()
            .any(|w| w.message.contains("runtime values")),
        "{warnings:?}"
    );
}

#[test]
fn every_form_that_rebinds_a_name_is_read_or_unknown() {
    // Review round 22: a name rebound inside a `for` over runtime values, a
    // `while`, `try`, `match`, tuple target, `del`, `with ... as` or import
    // kept the value it had before (the task's table was the old one, no
    // warning). Each case: statements after `t = 'mart.old'`, and the table
    // task `a` writes (None: unknown, its SQL reported as runtime).
    let cases: &[(&str, Option<&str>)] = &[
        (
            "for r in os.environ['X'].split(','):\n    t = 'mart.new'\n",
            None,
        ),
        (
            "for x in ['a', 'b']:\n    t = 'mart.' + x\n",
            Some("mart.b"),
        ),
        (
            "for x in ['a', 'b']:\n    if x == 'b':\n        t = 'mart.' + x\n",
            Some("mart.b"),
        ),
        (
            "for x in ['a', 'b']:\n    if x == 'c':\n        t = 'mart.' + x\n",
            Some("mart.old"),
        ),
        (
            "n = 0\nwhile n < 3:\n    t = 'mart.new'\n    n += 1\n",
            None,
        ),
        (
            "try:\n    t = os.environ['T']\nexcept KeyError:\n    pass\n",
            None,
        ),
        (
            "try:\n    import foo\nexcept ImportError:\n    foo = None\n",
            Some("mart.old"),
        ),
        (
            "match os.environ.get('E'):\n    case 'prod':\n        t = 'mart.prod'\n    case _:\n        t = 'mart.dev'\n",
            None,
        ),
        (
            "match os.environ.get('E'):\n    case 'prod':\n        t = 'mart.same'\n    case _:\n        t = 'mart.same'\n",
            Some("mart.same"),
        ),
        (
            "match os.environ.get('E'):\n    case t:\n        pass\n",
            None,
        ),
        ("t, u = 'mart.pair', 'x'\n", Some("mart.pair")),
        ("t, u = os.environ['A'].split(',')\n", None),
        ("del t\n", None),
        ("with open('/dev/null') as t:\n    pass\n", None),
        ("t: str = os.environ['T']\n", None),
        ("from config import t\n", None),
        (
            "ENV = 'prod'\nif ENV == 'prod':\n    t = 'mart.prod'\nelse:\n    t = 'mart.dev'\n",
            Some("mart.prod"),
        ),
        (
            "ENV = 'prod'\nif ENV in ('dev', 'test') or False:\n    t = 'mart.dev'\n",
            Some("mart.old"),
        ),
        (
            "flag = False\nif os.environ.get('X'):\n    flag = True\nif flag:\n    t = 'mart.flag'\n",
            None,
        ),
        (
            "flag = None\nif flag:\n    t = 'mart.flag'\n",
            Some("mart.old"),
        ),
        (
            "s = ''\nif s:\n    t = 'mart.s'\nelif t:\n    t = t + '_v2'\n",
            Some("mart.old_v2"),
        ),
    ];
    for (k, (stmts, expected)) in cases.iter().enumerate() {
        let text = format!(
            "{HEADER}import os\nt = 'mart.old'\n{stmts}with DAG('d{k}') as d:\n    SQL(task_id='a', sql=f'insert into {{t}} select * from raw.x')\n"
        );
        let (dags, warnings) = read(&[("f.py", &text)]);
        let writes = &task(&dags[0], "a").writes;
        match expected {
            Some(table) => assert_eq!(writes, &[*table], "{stmts}\n{warnings:?}"),
            None => {
                assert!(writes.is_empty(), "{stmts}: {writes:?}");
                assert!(
                    warnings
                        .iter()
                        .any(|w| w.message.contains("runtime values")),
                    "{stmts}: {warnings:?}"
                );
            }
        }
    }
    // Values changed in place: a dict's key set, a list appended to.
    let (dags, warnings) = read(&[(
        "m.py",
        &format!(
            "{HEADER}params = {{'t': 'mart.p'}}\nparams['t'] = 'mart.q'\ntables = ['a']\ntables.append('b')\nwith DAG('m', params=params) as d:\n    SQL(task_id='p', sql='insert into {{{{ params.t }}}} select * from raw.x')\n    for x in tables:\n        SQL(task_id=x, sql=f'insert into mart.{{x}} select 1')\n"
        ),
    )]);
    let d = &dags[0];
    assert_eq!(task(d, "p").writes, ["mart.q"], "{warnings:?}");
    assert_eq!(task(d, "b").writes, ["mart.b"]);
    let (dags, _) = read(&[(
        "n.py",
        &format!(
            "{HEADER}import os\ntables = ['a']\ntables.extend(os.environ['T'].split(','))\nwith DAG('n') as d:\n    for x in tables:\n        SQL(task_id=x, sql=f'insert into mart.{{x}} select 1')\n"
        ),
    )]);
    // The list is no longer known: its loop is not expanded as if it were.
    assert!(
        dags[0].tasks.iter().all(|t| t.task_id != "a"),
        "{:?}",
        dags[0].tasks
    );
}

#[test]
fn names_changed_from_afar_are_unknown_never_their_old_value() {
    // Review round 23: a name changed inside a function (`global`), through
    // `globals()`, `exec`, a star import, a walrus in a comprehension, a
    // second name for the same dict, or by a function it is passed to, kept
    // its old value: the task's table was the old one, with no warning.
    let sql_t = "SQL(task_id='t', sql='insert into ' + T + ' select 1')";
    let params_t = "SQL(task_id='t', params=p, sql='insert into {{ params.t }} select 1')";
    let cases: &[(&str, &str, Option<&str>)] = &[
        (
            "T = 'raw.a'\ndef f():\n    global T\n    T = 'raw.b'\nf()\n",
            sql_t,
            None,
        ),
        ("T = 'raw.a'\nglobals()['T'] = 'raw.b'\n", sql_t, None),
        ("T = 'raw.a'\nexec('T = \"raw.b\"')\n", sql_t, None),
        ("T = 'raw.a'\nfrom settings import *\n", sql_t, None),
        (
            "T = 'raw.a'\n[T := 'raw.b' for _ in range(1)]\n",
            sql_t,
            None,
        ),
        (
            "T = 'raw.a'\nimport sys\nsetattr(sys.modules[__name__], 'T', 'raw.b')\n",
            sql_t,
            None,
        ),
        // The way files make DAGs in a loop binds only the name it makes.
        (
            "T = 'raw.a'\nfor n in ['x']:\n    globals()[f'dag_{n}'] = n\n",
            sql_t,
            Some("raw.a"),
        ),
        (
            "p = {'t': 'raw.a'}\nq = p\nq['t'] = 'raw.b'\n",
            params_t,
            None,
        ),
        (
            "p = {'t': 'raw.a'}\nl = [p]\nl[0]['t'] = 'raw.b'\n",
            params_t,
            None,
        ),
        (
            "p = {'t': 'raw.a'}\ndef f(d):\n    d['t'] = 'raw.b'\nf(p)\n",
            params_t,
            None,
        ),
        (
            "p = {'t': 'raw.a'}\ndef f():\n    p['t'] = 'raw.b'\nf()\n",
            params_t,
            None,
        ),
        (
            "p = {'t': 'raw.a'}\np['t'] = 'raw.b'\n",
            params_t,
            Some("raw.b"),
        ),
        (
            "p = {'t': 'raw.a'}\n",
            "SQL(task_id='t', params=p, sql='insert into {{ params.get(\"t\") }} select 1')",
            Some("raw.a"),
        ),
        (
            "p = {'t': 'raw.a'}\n",
            "SQL(task_id='t', params=p | {'t': 'raw.b'}, sql='insert into {{ params.t }} select 1')",
            None,
        ),
    ];
    for (stmts, task_line, expected) in cases {
        let text = format!("{HEADER}{stmts}with DAG('d') as d:\n    {task_line}\n");
        let (dags, warnings) = read(&[("f.py", &text)]);
        let writes = &task(&dags[0], "t").writes;
        match expected {
            Some(table) => assert_eq!(writes, &[*table], "{stmts}\n{warnings:?}"),
            None => {
                assert!(
                    writes.iter().all(|w| w.contains("unknown")),
                    "{stmts}: {writes:?}"
                );
                assert!(!warnings.is_empty(), "{stmts}");
            }
        }
    }
}

#[test]
fn factories_loops_and_dependencies_ripple_cannot_follow_are_named() {
    let (dags, warnings) = read(&[(
        "f.py",
        &format!(
            "{HEADER}def range(n):\n    return ['x', 'y']\ndef mk(n):\n    if n == 'x':\n        return\n    SQL(task_id=f'm_{{n}}', sql=f'insert into raw.{{n}} select 1')\ndef deco(f):\n    return lambda n: f('z')\n@deco\ndef wrapped(n):\n    SQL(task_id=f'w_{{n}}', sql='select 1')\nkw = {{'sql': 'insert into raw.b select 1'}}\nwith DAG('d') as d:\n    for i in range(2):\n        SQL(task_id=f'r_{{i}}', sql='select 1')\n    mk('x')\n    mk('y')\n    wrapped('y')\n    SQL(task_id='k', **kw)\n    ts = [SQL(task_id='a', sql='select 1'), SQL(task_id='b', sql='select 1'), SQL(task_id='c', sql='select 1')]\n    ts[0] >> ts[-1]\n    ts[:2] >> ts[1:][1]\n    named = {{'x': SQL(task_id='e', sql='select 1')}}\n    named['x'] >> ts[0]\n"
        ),
    )]);
    let d = &dags[0];
    let ids: Vec<&str> = d.tasks.iter().map(|t| t.task_id.as_str()).collect();
    // `range` is the file's: its loop is not read as the builtin's.
    assert!(!ids.iter().any(|i| i.starts_with("r_")), "{ids:?}");
    // `mk('x')` returns before making its task.
    assert!(ids.contains(&"m_y") && !ids.contains(&"m_x"), "{ids:?}");
    // A decorator ripple does not know: not read as `wrapped('y')`.
    assert!(!ids.contains(&"w_y"), "{ids:?}");
    let mut c_up = task(d, "c").upstream.clone();
    c_up.sort_unstable();
    assert_eq!(c_up, ["a", "b"]);
    // A dict holding one task, by its key: that task.
    assert_eq!(task(d, "a").upstream, ["e"]);
    let text: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    for needle in [
        "loop are not expanded",
        "decorator ripple does not read (`@deco`)",
        "keyword arguments from `**`",
    ] {
        assert!(
            text.iter().any(|w| w.contains(needle)),
            "{needle}: {text:#?}"
        );
    }
}

#[test]
fn a_long_plus_chain_is_paid_once_per_part() {
    // 5,000 literals joined with `+` (about 300 KB of SQL) were counted as
    // every partial string: past the 128 MiB bound, the DAG lost its tasks.
    let parts: Vec<String> = (0..5000).map(|i| format!("' or x = {i:055}'")).collect();
    let text = format!(
        "{HEADER}with DAG('d') as d:\n    SQL(task_id='t', sql='insert into raw.big select * from raw.src where false' + {})\n    SQL(task_id='u', sql='insert into raw.other select 1')\n",
        parts.join(" + ")
    );
    let (dags, warnings) = read(&[("q.py", &text)]);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(task(&dags[0], "t").writes, ["raw.big"]);
    assert_eq!(task(&dags[0], "u").writes, ["raw.other"]);
}

#[test]
fn sql_whose_tables_follow_the_run_date_is_named() {
    // Review round 23: `raw.t_{{ ds_nodash }}` was read as the table of the
    // representative run, `{% if logical_date.day == 1 %}` as its branch,
    // silently; the date in values (`where d = '{{ ds }}'`) is fine.
    let (_, warnings) = read(&[(
        "x.py",
        &format!(
            "{HEADER}with DAG('d') as d:\n    SQL(task_id='t1', sql='insert into {{% if logical_date.day == 1 %}}raw.monthly{{% else %}}raw.daily{{% endif %}} select 1')\n    SQL(task_id='t2', sql='insert into raw.t_{{{{ ds_nodash }}}} select 1')\n    SQL(task_id='v1', sql=\"insert into raw.v select * from raw.s where d = '{{{{ ds }}}}' and k = {{{{ ds_nodash }}}} and m = {{{{ logical_date.month }}}}\")\n    SQL(task_id='v2', sql=\"delete from raw.w where d < '{{{{ macros.ds_add(ds, -7) }}}}'\")\n"
        ),
    )]);
    let named: Vec<&str> = warnings
        .iter()
        .filter(|w| w.message.contains("on other run dates"))
        .map(|w| w.message.split('`').nth(1).unwrap_or_default())
        .collect();
    assert_eq!(named, ["t1", "t2"], "{warnings:#?}");
}

#[test]
fn tasks_changed_or_made_in_ways_ripple_does_not_follow_are_named() {
    // Review round 24: each of these read a task's table wrong, or dropped
    // the task, with no warning.
    let (dags, warnings) = read(&[(
        "r.py",
        &format!(
            "{HEADER}import functools\nfrom airflow.models.param import Param\nfrom airflow.utils.task_group import TaskGroup\nSTMTS = ['insert into mart.a select 1']\nSql = SQL\nclass VersionedOperator(SQL):\n    pass\n@dag(schedule=None)\ndef never_called():\n    SQL(task_id='n', sql='insert into mart.never select 1')\nwith DAG('d', params={{'t': 'mart.p', 'n': Param(5)}}, default_args={{'params': {{'t': 'mart.q'}}}}) as d:\n    t = SQL(task_id='t1', sql='insert into mart.x select 1')\n    t.sql = 'insert into mart.y select 1'\n    s = SQL(task_id='t2', sql=STMTS)\n    Sql(task_id='t3', sql='insert into mart.t3 select 1')\n    WOp = functools.partial(SQL, conn_id='wh')\n    VersionedOperator(task_id='t4', sql='insert into mart.v select 1')\n    SQL(task_id='t5', sql='insert into {{{{ params.t }}}} select 1')\n    with TaskGroup('outer'):\n        with TaskGroup('inner', prefix_group_id=False):\n            SQL(task_id='a', sql='select 1')\n    SQL(task_id='t6', sql='insert into mart.u_{{{{ nosuch }}}} select 1')\nSTMTS.append('insert into mart.b select 1')\n"
        ),
    )]);
    assert_eq!(
        dags.len(),
        1,
        "{:?}",
        dags.iter().map(|d| &d.dag_id).collect::<Vec<_>>()
    );
    let d = &dags[0];
    // An unprefixed group's tasks keep bare ids, inside any group.
    assert!(d.tasks.iter().any(|t| t.task_id == "a"), "{:?}", d.tasks);
    // `default_args["params"]` is merged over `params`: unknown, not `mart.p`.
    assert!(!task(d, "t5").writes.contains(&"mart.p".to_string()));
    // An undefined value is no empty text in a table's name.
    assert!(
        !task(d, "t6").writes.contains(&"mart.u_".to_string()),
        "{:?}",
        task(d, "t6")
    );
    let text: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    for needle in [
        "`never_called` is never called",
        "`t.sql` is set after the task is made",
        "takes `sql=STMTS`, a list this file changes in place",
        "operator `SQLExecuteQueryOperator` is used as a value",
        "class `VersionedOperator` derives from operator",
        "t6",
    ] {
        assert!(
            text.iter().any(|w| w.contains(needle)),
            "{needle}: {text:#?}"
        );
    }
}

#[test]
fn params_ripple_cannot_hold_are_runtime_values() {
    // `Param(5)` and nested dicts were left out: `{{ params.n }}` printed
    // nothing, and `mart.n_` read as a table.
    let (dags, warnings) = read(&[(
        "p.py",
        &format!(
            "{HEADER}from airflow.models.param import Param\nwith DAG('d', params={{'n': Param(5), 'deep': {{'t': 'mart.x'}}, 's': 'mart.s'}}) as d:\n    SQL(task_id='a', sql='insert into mart.n_{{{{ params.n }}}} select 1')\n    SQL(task_id='b', sql='insert into {{{{ params.deep.t }}}} select 1')\n    SQL(task_id='c', sql='insert into {{{{ params.s }}}} select 1')\n"
        ),
    )]);
    let d = &dags[0];
    assert!(
        task(d, "a").writes.iter().all(|w| w.contains("unknown")),
        "{:?}",
        task(d, "a")
    );
    assert!(!task(d, "b").writes.contains(&"mart.x".to_string()));
    assert_eq!(task(d, "c").writes, ["mart.s"]);
    assert!(!warnings.is_empty());
}

#[test]
fn what_other_files_and_unreadable_task_sql_make_is_named() {
    // Review round 25: a factory in `include/` (Astronomer's layout) and an
    // `@task.sql` returning SQL built from its parameter dropped their
    // tasks' tables with no warning.
    let (dags, warnings) = read(&[
        ("../include/factory.py", "def make_load(name):\n    pass\n"),
        (
            "e.py",
            &format!(
                "{HEADER}from include.factory import make_load\n@task.sql\ndef load(t):\n    return f'insert into mart.{{t}} select * from raw.{{t}}'\nwith DAG('e') as d:\n    s = SQL(task_id='s', sql='select 1')\n    x = make_load('orders')\n    s >> x\n    load('orders')\n"
            ),
        ),
    ]);
    assert_eq!(dags.len(), 1);
    // `"sql/a.sql\n"` is SQL text to Airflow (it ends in a newline), never
    // the file.
    let (file_dags, _) = read(&[
        ("sql/a.sql", "insert into mart.file select 1"),
        (
            "f.py",
            &format!(
                "{HEADER}with DAG('f') as d:\n    SQL(task_id='n', sql='sql/a.sql\\n')\n    SQL(task_id='y', sql='sql/a.sql')\n"
            ),
        ),
    ]);
    assert!(task(&file_dags[0], "n").writes.is_empty());
    assert_eq!(task(&file_dags[0], "y").writes, ["mart.file"]);
    let text: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    for needle in [
        "`make_load(...)` is a function of `include/factory.py`",
        "`@task.sql` function `load` does not return a literal SQL",
    ] {
        assert!(
            text.iter().any(|w| w.contains(needle)),
            "{needle}: {text:#?}"
        );
    }
}

#[test]
fn a_taskflow_call_takes_the_next_free_id_after_an_operator_s() {
    // Review round 25: `EmptyOperator(task_id="extract")` then `extract()`
    // was a duplicate task and a made-up cycle; Airflow names it
    // `extract__1`.
    let (dags, warnings) = read(&[(
        "t.py",
        &format!(
            "{HEADER}from airflow.operators.empty import EmptyOperator\n@dag(schedule=None)\ndef d():\n    @task\n    def extract():\n        return 1\n    e = EmptyOperator(task_id='extract')\n    e >> extract()\nd()\n"
        ),
    )]);
    let ids: Vec<&str> = dags[0].tasks.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(ids, ["extract", "extract__1"]);
    assert_eq!(task(&dags[0], "extract__1").upstream, ["extract"]);
    assert!(
        warnings
            .iter()
            .all(|w| w.code != "task-cycle" && w.code != "duplicate-task"),
        "{warnings:?}"
    );
}

#[test]
fn taskflow_task_groups_datasets_and_sensors() {
    let (dags, warnings) = read(&[(
        "tf.py",
        &format!(
            "{HEADER}from airflow.utils.task_group import TaskGroup\nfrom airflow.datasets import Dataset\nfrom airflow.sensors.external_task import ExternalTaskSensor\n@dag(schedule='@hourly')\ndef flow():\n    @task\n    def extract():\n        return 1\n    @task(task_id='load_it')\n    def load(x):\n        pass\n    @task.sql\n    def agg():\n        return 'insert into mart.agg select * from raw.ev'\n    with TaskGroup('grp'):\n        inner = SQL(task_id='inner', sql='select 1', outlets=[Dataset('warehouse.mart.out')], inlets=[Dataset('warehouse.raw.in')])\n    wait = ExternalTaskSensor(task_id='wait', external_dag_id='other', external_task_id='done')\n    kick = TriggerDagRunOperator(task_id='kick', trigger_dag_id='downstream_dag')\n    data = extract()\n    load(data) >> agg() >> inner\n    wait >> data\n\nflow()\n"
        ),
    )]);
    // The DAGs the sensor and the trigger name are in no file read here.
    let unknown: Vec<(&str, u32)> = warnings.iter().map(|w| (w.code, w.line)).collect();
    assert_eq!(
        unknown,
        [("airflow-unknown-dag", 20), ("airflow-unknown-dag", 21)],
        "{warnings:?}"
    );
    let d = &dags[0];
    assert_eq!(task(d, "load_it").upstream, ["extract"]);
    assert_eq!(task(d, "agg").upstream, ["load_it"]);
    assert_eq!(task(d, "agg").writes, ["mart.agg"]);
    assert_eq!(task(d, "agg").operator, "@task.sql");
    assert_eq!(task(d, "grp.inner").upstream, ["agg"]);
    assert_eq!(task(d, "grp.inner").writes, ["warehouse.mart.out"]);
    assert_eq!(task(d, "grp.inner").reads, ["warehouse.raw.in"]);
    assert_eq!(task(d, "wait").upstream, ["other:done"]);
    assert_eq!(task(d, "kick").triggers, ["downstream_dag"]);
    assert_eq!(task(d, "extract").upstream, ["wait"]);
}

#[test]
fn every_dependency_form() {
    let (dags, warnings) = read(&[(
        "deps.py",
        &format!(
            "{HEADER}from airflow.models.baseoperator import chain, cross_downstream\nwith DAG('deps') as d:\n    a, b, c, e, f, g, h, i = [SQL(task_id=n, sql='select 1') for n in 'abcefghi']\n"
        ),
    )]);
    // A comprehension is a runtime construct: nothing is guessed.
    assert!(dags[0].tasks.is_empty());
    let _ = warnings;
    let ops: String = ["a", "b", "c", "e", "f", "g", "h", "i", "j"]
        .iter()
        .map(|n| format!("    {n} = SQL(task_id='{n}', sql='select 1')\n"))
        .collect();
    let (dags, warnings) = read(&[(
        "deps.py",
        &format!(
            "{HEADER}from airflow.models.baseoperator import chain, cross_downstream\nwith DAG('deps') as d:\n{ops}    a >> b >> c\n    e << a\n    [a, b] >> f\n    chain(f, g, h)\n    cross_downstream([a, b], [i, j])\n    h.set_downstream(i)\n    j.set_upstream(h)\n"
        ),
    )]);
    assert!(warnings.is_empty(), "{warnings:?}");
    let d = &dags[0];
    let up = |id: &str| {
        let mut v = task(d, id).upstream.clone();
        v.sort();
        v
    };
    assert_eq!(up("b"), ["a"]);
    assert_eq!(up("c"), ["b"]);
    assert_eq!(up("e"), ["a"]);
    assert_eq!(up("f"), ["a", "b"]);
    assert_eq!(up("g"), ["f"]);
    assert_eq!(up("h"), ["g"]);
    assert_eq!(up("i"), ["a", "b", "h"]);
    assert_eq!(up("j"), ["a", "b", "h"]);
}

#[test]
fn what_cannot_be_read_statically_is_a_warning_and_a_partial_result() {
    let (dags, warnings) = read(&[(
        "dyn.py",
        &format!(
            "{HEADER}with DAG('dyn') as d:\n    ok = SQL(task_id='ok', sql='insert into mart.ok select * from raw.ok')\n    for t in get_tables():\n        SQL(task_id=f'load_{{t}}', sql='select 1')\n    name = compute()\n    fs = SQL(task_id='fstring', sql=f'insert into mart.{{name}} select 1')\n    mapped = SQL.partial(task_id='mapped', conn_id='w').expand(sql=['select 1'])\n    noid = SQL(task_id=name, sql='select 1')\n    broken = SQL(task_id='broken', sql=\n"
        ),
    )]);
    let d = &dags[0];
    assert_eq!(task(d, "ok").writes, ["mart.ok"]);
    assert!(task(d, "fstring").writes.is_empty());
    let messages: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    let has = |needle: &str, line: u32| {
        messages
            .iter()
            .any(|m| m.contains(needle) && m.contains(&format!("dags/dyn.py:{line}")))
    };
    assert!(has("loop", 6), "{messages:#?}");
    assert!(has("f-string", 9), "{messages:#?}");
    // A literal mapped list is read: no warning, one task marked mapped.
    assert!(task(d, "mapped").mapped);
    assert!(
        !messages.iter().any(|m| m.contains("dyn.py:10")),
        "{messages:#?}"
    );
    assert!(has("no literal task_id", 11), "{messages:#?}");
    assert!(has("syntax error", 13), "{messages:#?}");
}

#[test]
fn transfer_operators_name_their_tables_and_hidden_ones_are_warned() {
    // Round 27: each wrote nothing, silently: no writer of `raw.orders`,
    // so an impact through the table it loads was short.
    let (dags, warnings) = read(&[(
        "t.py",
        &format!(
            "{HEADER}with DAG('t') as d:\n    \
             a = S3ToRedshiftOperator(task_id='a', schema='raw', table='orders', s3_bucket='b', s3_key='k')\n    \
             b = RedshiftToS3Operator(task_id='b', schema='mart', table='daily', s3_bucket='b', s3_key='k')\n    \
             c = GCSToBigQueryOperator(task_id='c', bucket='b', source_objects=['x'], destination_project_dataset_table='proj:raw.users')\n    \
             e = SQL(task_id='e', sql='CALL mart.refresh_all()')\n    \
             f = PrestoToMySqlOperator(task_id='f', sql='select 1', mysql_table='x.y')\n    \
             g = PostgresToGCSOperator(task_id='g', sql='select * from mart.daily', bucket='b', filename='f')\n"
        ),
    )]);
    let d = &dags[0];
    assert_eq!(task(d, "a").writes, ["raw.orders"]);
    assert_eq!(task(d, "b").reads, ["mart.daily"]);
    assert_eq!(task(d, "c").writes, ["proj.raw.users"]);
    let messages: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    let at = |code: &str, line: u32| {
        messages
            .iter()
            .any(|m| m.contains(code) && m.contains(&format!("dags/t.py:{line}")))
    };
    assert!(at("hidden-tables", 8), "{messages:#?}");
    assert!(at("PrestoToMySqlOperator", 9), "{messages:#?}");
    // A transfer to files writes no table: nothing to say.
    assert!(
        !messages
            .iter()
            .any(|m| m.contains("t.py:10") || m.contains("t.py:5")),
        "{messages:#?}"
    );
}

#[test]
fn a_dependency_on_a_name_bound_to_what_ripple_cannot_read_is_named() {
    // Round 28: `x = loads["orders"]` then `x >> build` dropped the edge,
    // silently; `prev = None` stays quiet (a loop's first round).
    let (_, warnings) = read(&[(
        "d.py",
        &format!(
            "{HEADER}with DAG('d') as d:\n    \
             loads = {{'orders': SQL(task_id='lo', sql='select 1'), 'c': SQL(task_id='lc', sql='select 1')}}\n    \
             build = SQL(task_id='build', sql='select 1')\n    \
             x = loads['orders']\n    x >> build\n    \
             same = d.get_task('build')\n    build << same\n    \
             prev = None\n    if prev:\n        prev >> build\n"
        ),
    )]);
    let messages: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    let at = |line: u32, name: &str| {
        messages.iter().any(|m| {
            m.contains(&format!("dags/d.py:{line}:"))
                && m.contains(&format!("a dependency on `{name}`, bound to"))
        })
    };
    assert!(at(8, "x") && at(10, "same"), "{messages:#?}");
    // Rebound in a loop ripple does not read: not the task before it.
    let (dags, warnings) = read(&[(
        "l.py",
        &format!(
            "{HEADER}with DAG('l') as d:\n    \
             prev = SQL(task_id='begin', sql='select 1')\n    \
             for step in get_steps():\n        \
             t = SQL(task_id=step, sql='select 1')\n        prev >> t\n        prev = t\n    \
             done = SQL(task_id='done', sql='select 1')\n    prev >> done\n"
        ),
    )]);
    assert!(task(&dags[0], "done").upstream.is_empty());
    assert!(
        warnings.iter().any(|w| w
            .to_string()
            .contains("a dependency on `prev`, rebound in a loop")),
        "{warnings:#?}"
    );
    assert!(
        !messages.iter().any(|m| m.contains("`prev`")),
        "{messages:#?}"
    );
}

#[test]
fn airflowignore_patterns_leave_out_what_airflow_never_loads() {
    // Round 29: a retired DAG under an ignored folder was read: phantom
    // runs, a false duplicate writer and a refused plan.
    let dag = |id: &str| {
        format!(
            "{HEADER}with DAG('{id}') as d:\n    SQL(task_id='t', sql='insert into mart.o select * from raw.{id}')\n"
        )
    };
    let (dags, warnings) = read(&[
        (
            ".airflowignore",
            "# retired\narchive/\nlegacy_[0-9]+\\.py\n",
        ),
        ("archive/old.py", &dag("arch")),
        ("legacy_1.py", &dag("leg")),
        ("ok.py", &dag("ok")),
    ]);
    let ids: Vec<&str> = dags.iter().map(|d| d.dag_id.as_str()).collect();
    // `archive/` reads alike in both syntaxes: left out. The regexp-only
    // pattern (Airflow 2's default syntax) is read and said so.
    assert_eq!(ids, ["leg", "ok"]);
    let messages: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    assert!(
        messages.iter().any(|m| m.contains("airflow-ignore")
            && m.contains("legacy_1.py")
            && m.contains("regexp")),
        "{messages:#?}"
    );
}

#[test]
fn a_with_of_a_task_that_is_no_setup_or_teardown_is_named() {
    // Airflow refuses the file (`Only setup/teardown tasks can be used as
    // context managers`); the tasks inside still made, no edge guessed.
    let (dags, warnings) = read(&[(
        "ctx.py",
        &format!(
            "{HEADER}with DAG('ctx') as d:\n    t = SQL(task_id='t', sql='select 1')\n    with t:\n        u = SQL(task_id='u', sql='select 1')\n"
        ),
    )]);
    assert!(task(&dags[0], "u").upstream.is_empty());
    let messages: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("dags/ctx.py:") && m.contains("not read as a setup or teardown")),
        "{messages:#?}"
    );
    // cosmos's `with DbtTaskGroup(...) as tg:` is a group, read, not a setup.
    let (dags, warnings) = read(&[(
        "c.py",
        &format!(
            "{HEADER}from cosmos import DbtTaskGroup, ProjectConfig\nwith DAG('c') as d:\n    \
             s = SQL(task_id='s', sql='select 1')\n    \
             with DbtTaskGroup(group_id='dbt', project_config=ProjectConfig('/x')) as tg:\n        pass\n    \
             s >> tg\n"
        ),
    )]);
    assert_eq!(task(&dags[0], "dbt").upstream, ["s"]);
    assert!(
        !warnings
            .iter()
            .any(|w| w.to_string().contains("setup or teardown")),
        "{warnings:#?}"
    );
}

#[test]
fn check_finds_duplicate_ids_unknown_upstreams_and_cycles() {
    let (_, findings) = read(&[(
        "bad.py",
        &format!(
            "{HEADER}with DAG('bad') as d:\n    a = SQL(task_id='a', sql='select 1')\n    b = SQL(task_id='b', sql='select 1')\n    a2 = SQL(task_id='a', sql='select 1')\n    a >> b >> a\n    b.set_upstream(ghost)\n"
        ),
    )]);
    let text: Vec<String> = findings.iter().map(ToString::to_string).collect();
    assert!(
        text.iter().any(|m| m.contains("duplicate-task")
            && m.contains("bad.py:7")
            && m.contains("first at line 5")),
        "{text:#?}"
    );
    assert!(
        text.iter()
            .any(|m| m.contains("unknown-task") && m.contains("depends on `ghost`")),
        "{text:#?}"
    );
    assert!(
        text.iter()
            .any(|m| m.contains("task-cycle") && m.contains("tasks a, b")),
        "{text:#?}"
    );
}

#[test]
fn a_dag_file_is_never_executed() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("executed.txt");
    let dags = dir.path().join("dags");
    std::fs::create_dir_all(&dags).unwrap();
    std::fs::write(
        dags.join("evil.py"),
        format!(
            "import os, sys\nopen({:?}, 'w').write('ran')\nos.system('touch {}')\nsys.exit(3)\n{HEADER}with DAG('evil') as d:\n    SQL(task_id='t', sql='insert into a select * from b')\n",
            marker.display().to_string(),
            marker.display()
        ),
    )
    .unwrap();
    let project = load_project(dir.path(), &LoadOptions::default()).unwrap();
    assert!(!marker.exists(), "the DAG file ran");
    assert_eq!(project.dags[0].tasks[0].writes, ["a"]);
}

#[test]
fn sql_files_outside_the_project_are_never_read() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("secret.sql"),
        "insert into leaked select * from secret",
    )
    .unwrap();
    let (dags, warnings) = read(&[(
        "escape.py",
        &format!(
            "{HEADER}with DAG('esc', template_searchpath=[{:?}]) as d:\n    SQL(task_id='t', sql='secret.sql')\n",
            outside.path().display().to_string()
        ),
    )]);
    assert!(dags[0].tasks[0].writes.is_empty());
    assert!(
        warnings.iter().any(|w| w.message.contains("secret.sql")),
        "{warnings:?}"
    );
}

#[test]
fn the_shop_dags_join_the_dbt_graph() {
    let g = LineageGraph::build(
        load_project(Path::new("fixtures/shop"), &LoadOptions::default()).unwrap(),
    );
    let tasks: usize = load_project(Path::new("fixtures/shop"), &LoadOptions::default())
        .unwrap()
        .dags
        .iter()
        .map(|d| d.tasks.len())
        .sum();
    assert!(tasks >= 20, "{tasks} tasks");
    let edge = |from: &str, to: &str| {
        g.graph.edge_indices().any(|e| {
            let (a, b) = g.graph.edge_endpoints(e).unwrap();
            g.graph[a].id == from && g.graph[b].id == to
        })
    };
    // Airflow loads the dbt source, dbt builds on it, Airflow exports a mart.
    assert!(edge("table.landing.orders", "source.raw.orders"));
    assert!(edge("model.orders_daily", "table.exports.daily_revenue"));
    let via = g
        .graph
        .edge_weights()
        .find(|e| e.via == "airflow:shop_daily.load.orders")
        .unwrap();
    assert_eq!(via.file, "dags/shop_daily.py");
}

#[test]
fn dags_and_schedule_commands_on_the_shop() {
    let run = |args: &[&str]| {
        let out = assert_cmd::Command::cargo_bin("ripple")
            .unwrap()
            .args(args)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        String::from_utf8(out).unwrap()
    };
    let dags: serde_json::Value = serde_json::from_str(&run(&[
        "dags",
        "--project",
        "fixtures/shop",
        "--format",
        "json",
    ]))
    .unwrap();
    assert_eq!(dags["schema_version"], 1);
    let daily = &dags["dags"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["dag_id"] == "shop_daily")
        .unwrap();
    let orders = daily["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task_id"] == "load.orders")
        .unwrap();
    assert_eq!(orders["writes"], serde_json::json!(["raw.orders"]));
    assert_eq!(orders["pool"], "warehouse");
    assert_eq!(orders["upstream"], serde_json::json!(["start"]));
    let schedule = run(&[
        "schedule",
        "--from",
        "2026-01-10",
        "--to",
        "2026-01-10",
        "--project",
        "fixtures/shop",
        "--format",
        "json",
    ]);
    insta::assert_snapshot!("shop_schedule_json", schedule);
}

#[test]
fn task_groups_are_dependency_endpoints() {
    const GROUPS: &str = r#"from airflow.utils.task_group import TaskGroup
from airflow.models.baseoperator import chain

with DAG('groups', schedule='@daily') as d:
    load = SQL(task_id='load', sql='insert into raw.o select 1')
    with TaskGroup('marts') as marts:
        a = SQL(task_id='a', sql='insert into m.a select * from raw.o')
        b = SQL(task_id='b', sql='insert into m.b select * from m.a')
        c = SQL(task_id='c', sql='insert into m.c select * from raw.o')
        a >> b
        with TaskGroup('inner') as inner:
            i1 = SQL(task_id='i1', sql='select 1')
        c >> inner
    with TaskGroup('flat', prefix_group_id=False) as flat:
        f1 = SQL(task_id='f1', sql='select 1')
    done = SQL(task_id='done', sql='select 1')
    after = SQL(task_id='after', sql='select 1')
    load >> marts >> done
    chain(marts, flat, after)
    flat.set_downstream(done)
"#;
    let (dags, warnings) = read(&[("g.py", &format!("{HEADER}{GROUPS}"))]);
    assert!(warnings.is_empty(), "{warnings:?}");
    let d = &dags[0];
    let ups = |id: &str| {
        let mut u = task(d, id).upstream.clone();
        u.sort();
        u
    };
    // Into a group: its roots; out of it: its leaves (nested groups count).
    assert_eq!(ups("marts.a"), ["load"]);
    assert_eq!(ups("marts.c"), ["load"]);
    assert_eq!(ups("marts.b"), ["marts.a"]);
    assert_eq!(ups("marts.inner.i1"), ["marts.c"]);
    assert_eq!(ups("done"), ["f1", "marts.b", "marts.inner.i1"]);
    // A group without the prefix is still an endpoint.
    assert_eq!(ups("f1"), ["marts.b", "marts.inner.i1"]);
    assert_eq!(ups("after"), ["f1"]);
}

#[test]
fn task_group_functions_cross_downstream_and_set_upstream_on_groups() {
    const FLOW: &str = r#"from airflow.decorators import task_group
from airflow.utils.task_group import TaskGroup
from airflow.models.baseoperator import chain, cross_downstream

@dag(schedule='@daily')
def tg_flow():
    @task
    def extract():
        return 1
    @task
    def clean(x):
        return x
    @task
    def publish():
        pass

    @task_group
    def transform(raw):
        @task
        def stage(x):
            return x
        @task_group(group_id='checks')
        def quality():
            SQL(task_id='rows', sql='select 1')
            SQL(task_id='nulls', sql='select 1')
        staged = stage(raw)
        staged >> quality()

    @task_group(group_id='enrich')
    def enrich_group():
        return clean(extract())

    start = SQL(task_id='start', sql='select 1')
    t1 = transform(start)
    t2 = transform(start)
    e = enrich_group()
    e >> publish()
    with TaskGroup('side') as side:
        s1 = SQL(task_id='s1', sql='select 1')
        s2 = SQL(task_id='s2', sql='select 1')
    end1 = SQL(task_id='end1', sql='select 1')
    end2 = SQL(task_id='end2', sql='select 1')
    cross_downstream(from_tasks=[side], to_tasks=[end1, end2])
    side.set_upstream(t2)
    p1 = SQL(task_id='p1', sql='select 1')
    p2 = SQL(task_id='p2', sql='select 1')
    q1 = SQL(task_id='q1', sql='select 1')
    q2 = SQL(task_id='q2', sql='select 1')
    chain(start, [p1, p2], [q1, q2])

tg_flow()
"#;
    let (dags, warnings) = read(&[("tg.py", &format!("{HEADER}{FLOW}"))]);
    assert!(warnings.is_empty(), "{warnings:?}");
    let d = &dags[0];
    let ups = |id: &str| {
        let mut u = task(d, id).upstream.clone();
        u.sort();
        u
    };
    // The group function's parameter carries the call's argument in.
    assert_eq!(ups("transform.stage"), ["start"]);
    // A nested group function: prefixed by both group ids.
    assert_eq!(ups("transform.checks.rows"), ["transform.stage"]);
    assert_eq!(ups("transform.checks.nulls"), ["transform.stage"]);
    // Called twice: the second group is `transform__1`, as Airflow names it.
    assert_eq!(ups("transform__1.stage"), ["start"]);
    assert_eq!(ups("transform__1.checks.rows"), ["transform__1.stage"]);
    // A group function returning a task stands for that task.
    assert_eq!(ups("enrich.clean"), ["enrich.extract"]);
    assert_eq!(ups("publish"), ["enrich.clean"]);
    // set_upstream on a group: its roots wait for the other group's leaves.
    assert_eq!(
        ups("side.s1"),
        ["transform__1.checks.nulls", "transform__1.checks.rows"]
    );
    assert_eq!(ups("side.s2"), ups("side.s1"));
    // cross_downstream from a group: its leaves to every listed task.
    assert_eq!(ups("end1"), ["side.s1", "side.s2"]);
    assert_eq!(ups("end2"), ["side.s1", "side.s2"]);
    // chain of two lists pairs them, element by element.
    assert_eq!(ups("p1"), ["start"]);
    assert_eq!(ups("q1"), ["p1"]);
    assert_eq!(ups("q2"), ["p2"]);
}

#[test]
fn mapped_tasks_are_one_task_with_their_literal_sql_read() {
    const MAPPED: &str = r#"
with DAG('mapping', schedule='@daily') as d:
    @task
    def list_files():
        return ['a', 'b']
    @task
    def load(path, target):
        pass
    @task
    def queries():
        return ['select 1']
    files = list_files()
    loads = load.partial(target='raw').expand(path=files)
    tables = SQL.partial(task_id='refresh', conn_id='wh').expand(
        sql=['insert into mart.a select * from raw.a', 'insert into mart.b select * from raw.b'])
    kwargs = SQL.partial(task_id='by_kwargs').expand_kwargs([
        {'sql': 'insert into mart.c select * from raw.c'},
        {'sql': 'insert into mart.d select * from raw.d', 'parameters': {'x': 1}},
    ])
    base = SQL.partial(task_id='from_partial', sql='insert into mart.e select * from raw.e')
    over = base.expand(parameters=[{'d': 1}, {'d': 2}])
    runtime = SQL.partial(task_id='runtime').expand(sql=queries())
    loads >> tables
    over >> runtime
"#;
    let (dags, warnings) = read(&[("m.py", &format!("{HEADER}{MAPPED}"))]);
    let d = &dags[0];
    let ids: Vec<&str> = d.tasks.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "list_files",
            "load",
            "refresh",
            "by_kwargs",
            "from_partial",
            "queries",
            "runtime"
        ]
    );
    for id in ["load", "refresh", "by_kwargs", "from_partial", "runtime"] {
        assert!(task(d, id).mapped, "{id} is mapped");
    }
    assert!(!task(d, "list_files").mapped);
    // A TaskFlow mapped over another task's output runs after it.
    assert_eq!(task(d, "load").upstream, ["list_files"]);
    assert_eq!(task(d, "refresh").upstream, ["load"]);
    assert_eq!(task(d, "refresh").writes, ["mart.a", "mart.b"]);
    assert_eq!(task(d, "refresh").reads, ["raw.a", "raw.b"]);
    assert_eq!(task(d, "by_kwargs").writes, ["mart.c", "mart.d"]);
    assert_eq!(task(d, "from_partial").writes, ["mart.e"]);
    // SQL from another task's output is runtime: a warning naming the
    // line, and the upstream kept.
    let mut up = task(d, "runtime").upstream.clone();
    up.sort();
    assert_eq!(up, ["from_partial", "queries"]);
    assert!(task(d, "runtime").writes.is_empty());
    let messages: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert!(
        messages[0].contains("dags/m.py:25") && messages[0].contains("runtime value"),
        "{messages:#?}"
    );
}

#[test]
fn datasets_assets_sensors_markers_and_triggers_link_dags() {
    const PRODUCER: &str = r#"from airflow.datasets import Dataset
from airflow.sensors.external_task import ExternalTaskMarker
ORDERS = Dataset('postgres://wh:5432/analytics/mart/orders')
EVENTS = Dataset('s3://lake/events/')
with DAG('producer', schedule='0 1 * * *') as d:
    load = SQL(task_id='load', sql='insert into mart.orders select * from raw.orders', outlets=[ORDERS])
    ev = SQL(task_id='events', sql='select 1', outlets=[EVENTS, Dataset('mysql://db:3306/shop/items')])
    mark = ExternalTaskMarker(task_id='mark', external_dag_id='sensed', external_task_id='wait')
    kick = TriggerDagRunOperator(task_id='kick', trigger_dag_id='triggered')
    load >> ev >> mark >> kick
"#;
    const CONSUMERS: &str = r#"from airflow.sdk import Asset, AssetAll, asset
from airflow.datasets import Dataset, DatasetOrTimeSchedule
from airflow.timetables.trigger import CronTriggerTimetable
from airflow.sensors.external_task import ExternalTaskSensor
with DAG('on_orders', schedule=[Asset('postgres://wh:5432/analytics/mart/orders')]) as a:
    SQL(task_id='report', sql='insert into mart.report select * from mart.orders')
both = Asset(name='events', uri='s3://lake/events/') | Dataset('mysql://db:3306/shop/items')
with DAG('on_either', schedule=both) as b:
    SQL(task_id='x', sql='select 1')
with DAG('or_time', schedule=DatasetOrTimeSchedule(timetable=CronTriggerTimetable('0 6 * * *', timezone='UTC'), datasets=AssetAll(Asset('s3://lake/events/')))) as c:
    SQL(task_id='y', sql='select 1')
with DAG('sensed', schedule='0 3 * * *') as e:
    wait = ExternalTaskSensor(task_id='wait', external_dag_id='producer', external_task_id='load')
    ghost = ExternalTaskSensor(task_id='ghost', external_dag_id='nowhere', external_task_ids=['a', 'b'])
with DAG('triggered', schedule=None) as f:
    SQL(task_id='z', sql='select 1')
@asset(schedule=[Asset('s3://lake/events/')], uri='s3://lake/summary/')
def summary():
    pass
with DAG('on_summary', schedule=[summary]) as g:
    SQL(task_id='w', sql='select 1')
"#;
    let (dags, warnings) = read(&[
        ("producer.py", &format!("{HEADER}{PRODUCER}")),
        ("consumers.py", &format!("{HEADER}{CONSUMERS}")),
    ]);
    let by = |id: &str| dags.iter().find(|d| d.dag_id == id).unwrap();
    let edges = |id: &str| -> Vec<String> {
        by(id)
            .upstream_dags
            .iter()
            .map(|e| {
                let via = serde_json::to_value(e.via).unwrap();
                format!(
                    "{}:{} {} {}{}",
                    e.dag_id,
                    e.task_id,
                    via.as_str().unwrap(),
                    e.dataset,
                    e.task
                )
            })
            .collect()
    };
    // A URI naming a table is that table: the outlet joins the SQL's write.
    assert_eq!(task(by("producer"), "load").writes, ["mart.orders"]);
    assert_eq!(by("on_orders").schedule_datasets, ["mart.orders"]);
    assert_eq!(by("on_orders").schedule.as_deref(), Some("datasets"));
    assert_eq!(edges("on_orders"), ["producer:load dataset mart.orders"]);
    assert_eq!(
        by("on_either").schedule_datasets,
        ["s3://lake/events/", "shop.items"]
    );
    assert_eq!(
        edges("on_either"),
        [
            "producer:events dataset s3://lake/events/",
            "producer:events dataset shop.items"
        ]
    );
    // Datasets or'ed with time: scheduled by its cron, and by the producer.
    assert_eq!(by("or_time").schedule.as_deref(), Some("0 6 * * *"));
    assert_eq!(
        edges("or_time"),
        ["producer:events dataset s3://lake/events/"]
    );
    // A sensor waits in its own DAG; a marker in the upstream one names
    // the downstream task.
    assert_eq!(
        edges("sensed"),
        [
            "nowhere:a sensor ghost",
            "nowhere:b sensor ghost",
            "producer:load sensor wait",
            "producer:mark marker wait"
        ]
    );
    assert!(task(by("producer"), "mark").upstream == ["events"]);
    assert_eq!(edges("triggered"), ["producer:kick trigger "]);
    // Airflow 3's @asset is a DAG writing its asset; scheduling on the
    // function is scheduling on the asset.
    assert_eq!(
        task(by("summary"), "summary").writes,
        ["s3://lake/summary/"]
    );
    assert_eq!(
        edges("summary"),
        ["producer:events dataset s3://lake/events/"]
    );
    assert_eq!(
        edges("on_summary"),
        ["summary:summary dataset s3://lake/summary/"]
    );
    let messages: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert!(
        messages[0].contains("airflow-unknown-dag")
            && messages[0].contains("dags/consumers.py:17")
            && messages[0].contains("`nowhere`"),
        "{messages:#?}"
    );
}

#[test]
fn dags_started_by_other_dags_run_after_them_in_the_production_schedule() {
    const FILES: &str = r#"from airflow.datasets import Dataset
with DAG('producer', schedule='0 1 * * *') as p:
    SQL(task_id='load', sql='select 1', outlets=[Dataset('postgres://h/db/mart/orders')])
with DAG('on_orders', schedule=[Dataset('postgres://h/db/mart/orders')]) as c:
    TriggerDagRunOperator(task_id='kick', trigger_dag_id='triggered')
with DAG('triggered', schedule=None) as t:
    SQL(task_id='z', sql='select 1')
with DAG('loop_a', schedule=None) as la:
    TriggerDagRunOperator(task_id='go', trigger_dag_id='loop_b')
with DAG('loop_b', schedule=None) as lb:
    TriggerDagRunOperator(task_id='go', trigger_dag_id='loop_a')
with DAG('both', schedule=DatasetOrTimeSchedule(timetable=CronTriggerTimetable('0 6 * * *', timezone='UTC'), datasets=[Dataset('postgres://h/db/mart/orders')])) as b:
    SQL(task_id='r', sql='select 1')
with DAG('cron_kicked', schedule='0 12 * * *') as ck:
    SQL(task_id='k', sql='select 1')
with DAG('kicker', schedule='0 4 * * *') as kk:
    TriggerDagRunOperator(task_id='go', trigger_dag_id='cron_kicked')
"#;
    let (dags, _) = read(&[("chain.py", &format!("{HEADER}{FILES}"))]);
    let hour = |s: &str| ripple::time::TimeKey::parse(s).unwrap().start;
    let s = ripple::schedule::production_schedule(
        &dags,
        &ripple::config::Config::default(),
        hour("2026-01-10"),
        hour("2026-01-11"),
    );
    let runs = |id: &str| -> Vec<(String, String)> {
        let d = s.dags.iter().find(|d| d.dag_id == id).unwrap();
        d.runs
            .iter()
            .map(|r| (r.start.clone(), r.end.clone()))
            .collect()
    };
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        runs("producer"),
        [pair("2026-01-10T01:00Z", "2026-01-10T02:00Z")]
    );
    // Each starts as the run that starts it ends (60 minutes by default).
    assert_eq!(
        runs("on_orders"),
        [pair("2026-01-10T02:00Z", "2026-01-10T03:00Z")]
    );
    assert_eq!(
        runs("triggered"),
        [pair("2026-01-10T03:00Z", "2026-01-10T04:00Z")]
    );
    let on_orders = s.dags.iter().find(|d| d.dag_id == "on_orders").unwrap();
    assert_eq!(on_orders.after, ["producer"]);
    // DAGs that only start each other have no time to start from.
    let unscheduled: Vec<&str> = s.not_scheduled.iter().map(|u| u.dag_id.as_str()).collect();
    assert_eq!(unscheduled, ["loop_a", "loop_b"]);
    // Round 29: a DAG with a time schedule that others start too runs at
    // both (`DatasetOrTimeSchedule`, a cron DAG a trigger starts).
    assert_eq!(
        runs("both"),
        [
            pair("2026-01-10T02:00Z", "2026-01-10T03:00Z"),
            pair("2026-01-10T06:00Z", "2026-01-10T07:00Z")
        ]
    );
    assert_eq!(
        runs("cron_kicked"),
        [
            pair("2026-01-10T05:00Z", "2026-01-10T06:00Z"),
            pair("2026-01-10T12:00Z", "2026-01-10T13:00Z")
        ]
    );
}

#[test]
fn runs_started_before_the_horizon_and_self_starting_dags_are_not_lost() {
    // `c` at 03:00 starts `a` at 04:00, which starts `b` at 05:00: with the
    // horizon from 04:00, `c`'s run was left out and with it `a`'s and `b`'s,
    // and a backfill was placed over them. `s`, started by `c` and then by
    // itself until done, was taken as never running.
    const FILES: &str = r#"with DAG('c', schedule='0 3 * * *') as c:
    TriggerDagRunOperator(task_id='k', trigger_dag_id='a')
    TriggerDagRunOperator(task_id='k2', trigger_dag_id='s')
with DAG('a', schedule=None) as a:
    TriggerDagRunOperator(task_id='k', trigger_dag_id='b')
with DAG('b', schedule=None) as b:
    SQL(task_id='z', sql='select 1')
with DAG('s', schedule=None) as s_:
    TriggerDagRunOperator(task_id='again', trigger_dag_id='s')
"#;
    let (dags, _) = read(&[("chain.py", &format!("{HEADER}{FILES}"))]);
    let hour = |s: &str| ripple::time::TimeKey::parse(s).unwrap().start;
    let s = ripple::schedule::production_schedule(
        &dags,
        &ripple::config::Config::default(),
        hour("2026-01-10T04"),
        hour("2026-01-10T06"),
    );
    let runs = |id: &str| -> Vec<(String, String)> {
        s.dags
            .iter()
            .find(|d| d.dag_id == id)
            .map(|d| {
                d.runs
                    .iter()
                    .map(|r| (r.start.clone(), r.end.clone()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(runs("c"), Vec::<(String, String)>::new());
    assert_eq!(runs("a"), [pair("2026-01-10T04:00Z", "2026-01-10T05:00Z")]);
    assert_eq!(runs("b"), [pair("2026-01-10T05:00Z", "2026-01-10T06:00Z")]);
    let self_started = s.not_scheduled.iter().find(|u| u.dag_id == "s").unwrap();
    assert!(self_started.unreadable, "{self_started:?}");
    assert!(self_started.why.contains("cycle"), "{self_started:?}");
}

/// A dbt project with DAGs beside it, as one ripple project.
fn dbt_and_dags(dags: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let files: &[(&str, &str)] = &[
        (
            "dbt_project.yml",
            "name: shop\nversion: '1.0'\nconfig-version: 2\nprofile: shop\nmodel-paths: [models]\nseed-paths: [seeds]\n",
        ),
        ("seeds/countries.csv", "code,name\nfr,France\n"),
        ("models/stg_orders.sql", "select * from raw.orders"),
        (
            "models/orders_daily.sql",
            "select o.*, c.name from {{ ref('stg_orders') }} o join {{ ref('countries') }} c on true",
        ),
        (
            "models/orders_weekly.sql",
            "select * from {{ ref('orders_daily') }}",
        ),
        (
            "models/schema.yml",
            "version: 2\nmodels:\n  - name: orders_daily\n    columns:\n      - name: id\n        data_tests: [not_null]\n",
        ),
    ];
    for (path, text) in files.iter().chain(dags) {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

#[test]
fn dbt_in_airflow_maps_each_model_to_the_task_that_builds_it() {
    const COSMOS: &str = r#"from cosmos import DbtTaskGroup, DbtDag, ProjectConfig, RenderConfig
from cosmos.constants import TestBehavior
from airflow.operators.bash import BashOperator
with DAG('elt', schedule='@daily') as d:
    extract = SQL(task_id='extract', sql='insert into raw.orders select * from landing.orders')
    transform = DbtTaskGroup(group_id='transform', project_config=ProjectConfig('/usr/app/dbt'),
                             render_config=RenderConfig(select=['path:models', 'countries']))
    publish = SQL(task_id='publish', sql='select 1')
    extract >> transform >> publish
BUILD = RenderConfig(select=['tag:none_such', 'orders_weekly'], test_behavior=TestBehavior.BUILD)
DbtDag(dag_id='dbt_weekly', schedule='@weekly', project_config=ProjectConfig('/usr/app/dbt'), render_config=BUILD)
with DAG('bash_dbt', schedule=None) as b:
    BashOperator(task_id='dbt_stg', bash_command='cd /dbt && dbt run --select stg_orders --profiles-dir .')
"#;
    let dir = dbt_and_dags(&[
        ("dags/elt.py", &format!("{HEADER}{COSMOS}")),
        ("ripple.yml", "datasets:\n  stg_orders: { grain: none }\n"),
    ]);
    let project = load_project(dir.path(), &LoadOptions::default()).unwrap();
    let dag = |id: &str| project.dags.iter().find(|d| d.dag_id == id).unwrap();
    let elt = dag("elt");
    let tasks: Vec<(&str, Vec<&str>)> = elt
        .tasks
        .iter()
        .map(|t| {
            let mut up: Vec<&str> = t.upstream.iter().map(String::as_str).collect();
            up.sort();
            (t.task_id.as_str(), up)
        })
        .collect();
    // Cosmos's names: `<model>_run`, a seed `_seed`; a tested model a
    // group of `run` then `test`; all inside the DbtTaskGroup's prefix.
    assert_eq!(
        tasks,
        [
            ("extract", vec![]),
            ("transform.countries_seed", vec!["extract"]),
            (
                "transform.orders_daily.run",
                vec!["transform.countries_seed", "transform.stg_orders_run"]
            ),
            (
                "transform.orders_daily.test",
                vec!["transform.orders_daily.run"]
            ),
            (
                "transform.orders_weekly_run",
                vec!["transform.orders_daily.test"]
            ),
            ("transform.stg_orders_run", vec!["extract"]),
            ("publish", vec!["transform.orders_weekly_run"]),
        ]
    );
    let weekly: Vec<&str> = dag("dbt_weekly")
        .tasks
        .iter()
        .map(|t| t.task_id.as_str())
        .collect();
    assert_eq!(weekly, ["orders_weekly_build"]);
    let airflow_of = |id: &str| {
        let job = project.jobs.iter().find(|j| j.id == id).unwrap();
        assert!(job.airflow.is_none(), "a dbt job stays a dbt job");
        job.built_by
            .as_ref()
            .map(|a| format!("{}:{}", a.dag_id, a.task_id))
    };
    // Built by two tasks: the first by DAG id is the one its executor runs.
    assert_eq!(
        airflow_of("model.stg_orders").as_deref(),
        Some("bash_dbt:dbt_stg")
    );
    assert_eq!(
        airflow_of("model.orders_daily").as_deref(),
        Some("elt:transform.orders_daily.run")
    );
    assert_eq!(
        airflow_of("model.orders_weekly").as_deref(),
        Some("dbt_weekly:orders_weekly_build")
    );
    let bash = &dag("bash_dbt").tasks[0];
    assert_eq!(bash.dbt.as_ref().unwrap().nodes, ["model.stg_orders"]);
    let text: Vec<String> = project
        .diagnostics
        .iter()
        .map(ToString::to_string)
        .collect();
    // Built twice: said, with the task that wins.
    assert!(
        text.iter().any(|m| m.contains("airflow-dbt")
            && m.contains("model.stg_orders")
            && m.contains("`bash_dbt:dbt_stg` and by `elt:transform.stg_orders_run`")),
        "{text:#?}"
    );
    // The plan's Airflow commands for a dbt model name the cosmos task.
    let g = LineageGraph::build(project);
    let key = |s: &str| ripple::time::TimeKey::parse(s).unwrap();
    let request = ripple::impact::ImpactRequest {
        changed: vec!["stg_orders".to_string()],
        from: key("2026-01-10"),
        to: key("2026-01-10"),
        as_of: key("2026-02-01").start,
        columns: Vec::new(),
    };
    let doc =
        ripple::plan::for_change(&g, &request, &ripple::plan::PlanOptions::default()).unwrap();
    let airflow2 = |dataset: &str| {
        doc.tasks
            .iter()
            .find(|t| t.task.dataset == dataset)
            .and_then(|t| t.commands.airflow2.as_deref().map(str::to_string))
            .unwrap_or_else(|| panic!("no Airflow command for {dataset}"))
    };
    assert!(
        airflow2("model.orders_daily").ends_with("-t '^transform\\.orders_daily\\.run$' elt"),
        "{}",
        airflow2("model.orders_daily")
    );
}

#[test]
fn dbt_run_by_airflow_without_the_dbt_project_is_a_warning() {
    let (dags, warnings) = read(&[(
        "b.py",
        &format!(
            "{HEADER}from airflow.operators.bash import BashOperator
with DAG('b') as d:
    BashOperator(task_id='dbt', bash_command='dbt --no-write-json build -s +orders_daily --exclude tag:slow && dbt test')
"
        ),
    )]);
    let run = dags[0].tasks[0].dbt.as_ref().unwrap();
    assert_eq!(run.command, "build");
    assert_eq!(run.select, ["+orders_daily"]);
    assert_eq!(run.exclude, ["tag:slow"]);
    let _ = warnings;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("dags")).unwrap();
    std::fs::write(
        dir.path().join("dags/c.py"),
        format!(
            "{HEADER}from cosmos import DbtTaskGroup
with DAG('c') as d:
    a = SQL(task_id='a', sql='select 1')
    g = DbtTaskGroup(group_id='dbt')
    a >> g
"
        ),
    )
    .unwrap();
    let project = load_project(dir.path(), &LoadOptions::default()).unwrap();
    // The group stays one task standing for it, its edges kept.
    let g = &project.dags[0].tasks[1];
    assert_eq!(
        (g.task_id.as_str(), g.operator.as_str()),
        ("dbt", "DbtTaskGroup")
    );
    assert_eq!(g.upstream, ["a"]);
    let text: Vec<String> = project
        .diagnostics
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        text.iter().any(|m| m.contains("airflow-dbt")
            && m.contains("dags/c.py:7")
            && m.contains("no dbt project")),
        "{text:#?}"
    );
}

#[test]
fn groups_made_outside_with_and_mapped_task_groups() {
    const FLOW: &str = r#"from airflow.utils.task_group import TaskGroup
from airflow.decorators import task_group
with DAG('outside', schedule=None) as d:
    start = SQL(task_id='start', sql='select 1')
    tg = TaskGroup('extract')
    a = SQL(task_id='a', sql='select 1', task_group=tg)
    with tg:
        b = SQL(task_id='b', sql='select 1')
    start >> tg

    @task
    def files():
        return ['x', 'y']

    @task_group
    def per_file(name):
        @task
        def load(n):
            pass
        @task
        def check():
            pass
        load(name) >> check()

    per_file.expand(name=files()) >> SQL(task_id='end', sql='select 1')
"#;
    let (dags, warnings) = read(&[("o.py", &format!("{HEADER}{FLOW}"))]);
    assert!(warnings.is_empty(), "{warnings:?}");
    let d = &dags[0];
    let ups = |id: &str| task(d, id).upstream.clone();
    assert_eq!(ups("extract.a"), ["start"]);
    assert_eq!(ups("extract.b"), ["start"]);
    // A mapped task group: each of its tasks is mapped, its edges kept.
    assert!(task(d, "per_file.load").mapped && task(d, "per_file.check").mapped);
    assert!(!task(d, "files").mapped);
    assert_eq!(ups("per_file.load"), ["files"]);
    assert_eq!(ups("end"), ["per_file.check"]);
}

#[test]
fn ripple_dags_lists_cross_dag_edges() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("dags")).unwrap();
    std::fs::write(
        dir.path().join("dags/x.py"),
        format!("{HEADER}from airflow.datasets import Dataset\nwith DAG('producer', schedule='@daily') as p:\n    SQL(task_id='load', sql='select 1', outlets=[Dataset('postgres://h/db/mart/orders')])\nwith DAG('consumer', schedule=[Dataset('postgres://h/db/mart/orders')]) as c:\n    SQL(task_id='use', sql='select 1')\n"),
    )
    .unwrap();
    let out = assert_cmd::Command::cargo_bin("ripple")
        .unwrap()
        .args(["dags", "--project"])
        .arg(dir.path())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("consumer (dags/x.py:7) schedule datasets\n  after DAG producer:load (dataset mart.orders)\n"),
        "{text}"
    );
}

#[test]
fn ripple_dags_says_when_a_dag_file_does_not_parse() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("dags")).unwrap();
    std::fs::write(
        dir.path().join("dags/broken.py"),
        "from airflow import DAG\nwith DAG('broken', schedule='@daily') as dag:\n    x = (\n",
    )
    .unwrap();
    for format in ["text", "json"] {
        let out = assert_cmd::Command::cargo_bin("ripple")
            .unwrap()
            .args(["dags", "--format", format, "--project"])
            .arg(dir.path())
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let text = String::from_utf8(out).unwrap();
        // Airflow would not load the file: the listing must not look fine.
        assert!(
            text.contains("python-syntax-error") && text.contains("dags/broken.py:4:1"),
            "{text}"
        );
    }
}

#[test]
fn a_task_group_function_calling_itself_is_read_once() {
    let (dags, warnings) = read(&[(
        "r.py",
        &format!(
            "{HEADER}from airflow.decorators import task_group\nwith DAG('r') as d:\n    @task_group\n    def g():\n        SQL(task_id='t', sql='select 1')\n        g()\n    g()\n"
        ),
    )]);
    let ids: Vec<&str> = dags[0].tasks.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(ids, ["g.t"]);
    let text: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    assert!(
        text.iter()
            .any(|m| m.contains("calls itself") && m.contains("dags/r.py:9")),
        "{text:#?}"
    );
}

#[test]
fn group_functions_that_multiply_are_cut_off() {
    // g0 calls g1 twice, g1 calls g2 twice, ...: 2^40 groups in Airflow.
    let mut text =
        format!("{HEADER}from airflow.decorators import task_group\nwith DAG('m') as d:\n");
    for i in 0..40 {
        text.push_str(&format!(
            "    @task_group\n    def g{i}():\n        g{}()\n        g{}()\n",
            i + 1,
            i + 1
        ));
    }
    text.push_str(
        "    @task_group\n    def g40():\n        SQL(task_id='t', sql='select 1')\n    g0()\n",
    );
    let started = std::time::Instant::now();
    let (dags, warnings) = read(&[("m.py", &text)]);
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert!(!dags[0].tasks.is_empty());
    assert!(
        warnings.iter().any(|w| w
            .message
            .contains("calls of `@task_group` or task-making functions in one file")),
        "{warnings:?}"
    );
}

#[test]
fn cosmos_names_follow_the_test_behavior() {
    const DAGS: &str = r#"from cosmos import DbtTaskGroup, RenderConfig
from cosmos.constants import TestBehavior
with DAG('none', schedule=None) as a:
    DbtTaskGroup(group_id='t', render_config=RenderConfig(select=['+orders_daily'], test_behavior=TestBehavior.NONE))
with DAG('build', schedule=None) as b:
    DbtTaskGroup(render_config=RenderConfig(select=['countries', 'orders_daily'], test_behavior='build'))
"#;
    let dir = dbt_and_dags(&[("dags/c.py", &format!("{HEADER}{DAGS}"))]);
    let project = load_project(dir.path(), &LoadOptions::default()).unwrap();
    let ids = |dag: &str| -> Vec<String> {
        let d = project.dags.iter().find(|d| d.dag_id == dag).unwrap();
        d.tasks.iter().map(|t| t.task_id.clone()).collect()
    };
    // Without tests after each model, a tested model is one task too.
    assert_eq!(
        ids("none"),
        ["t.countries_seed", "t.orders_daily_run", "t.stg_orders_run"]
    );
    // Under BUILD every node is `_build`; the default group id is cosmos's.
    assert_eq!(
        ids("build"),
        [
            "dbt_task_group.countries_build",
            "dbt_task_group.orders_daily_build"
        ]
    );
}

/// Loops the way teams write them: literal lists, tuples and ranges (read
/// once per value), loops ripple cannot unroll, and a task factory.
const LOOPS: &str = r#"from airflow.operators.empty import EmptyOperator
from airflow.utils.task_group import TaskGroup
def make(name, dag):
    a = EmptyOperator(task_id=f'make_{name}', dag=dag)
    return a
with DAG('loops') as d:
    done = EmptyOperator(task_id='done')
    for shop in [1, 2, 3]:
        copy = EmptyOperator(task_id=f'copy_{shop}')
        load = SQL(task_id=f'load_{shop}', sql=f'insert into mart.shop_{shop} select * from raw.shop_{shop}')
        copy >> load >> done
    for region in ('emea', 'amer'):
        with TaskGroup(region):
            for day in range(0, 4, 2):
                EmptyOperator(task_id=f'{region}_{day}')
    for t in get_tables():
        EmptyOperator(task_id=f'runtime_{t}')
    for x in ['a', 'b']:
        if x == 'b':
            break
        EmptyOperator(task_id=f'early_{x}')
    make('direct', d)
"#;

#[test]
fn loops_over_literal_values_are_read_once_per_value_and_others_are_named() {
    let (dags, warnings) = read(&[("loops.py", &format!("{HEADER}{LOOPS}"))]);
    let d = &dags[0];
    let mut ids: Vec<&str> = d.tasks.iter().map(|t| t.task_id.as_str()).collect();
    ids.sort_unstable();
    assert_eq!(
        ids,
        [
            "amer.amer_0",
            "amer.amer_2",
            "copy_1",
            "copy_2",
            "copy_3",
            "done",
            "emea.emea_0",
            "emea.emea_2",
            "load_1",
            "load_2",
            "load_3",
            "make_direct",
        ]
    );
    // A task factory's call is read with its arguments.
    assert!(task(d, "make_direct").upstream.is_empty());
    // Each iteration's names are its own: load_2 follows copy_2 only.
    assert_eq!(task(d, "load_2").upstream, ["copy_2"]);
    assert_eq!(task(d, "done").upstream.len(), 3);
    // The f-string SQL is read with the loop's value.
    assert_eq!(task(d, "load_3").writes, ["mart.shop_3"]);
    assert_eq!(task(d, "load_3").reads, ["raw.shop_3"]);
    let messages: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    let has = |needle: &str, line: u32| {
        messages
            .iter()
            .any(|m| m.contains(needle) && m.contains(&format!("dags/loops.py:{line}")))
    };
    // A loop over runtime values and one that breaks early are named.
    assert!(
        has("tasks made in a loop are not expanded", 19),
        "{messages:#?}"
    );
    assert!(
        has("tasks made in a loop are not expanded", 21),
        "{messages:#?}"
    );
    assert!(
        !messages.iter().any(|m| m.contains("f-string")),
        "{messages:#?}"
    );
    assert_eq!(messages.len(), 2, "{messages:#?}");
}

/// Dependencies set in a loop over tasks, as teams fan out and back in:
/// over a list a comprehension made, a literal list of tasks, and a loop
/// that makes them; a loop over runtime values that only sets
/// dependencies is named, never dropped silently.
#[test]
fn dependencies_set_in_loops_over_tasks_are_read() {
    let text = format!(
        "{HEADER}from airflow.operators.empty import EmptyOperator
TABLES = ['orders', 'customers', 'items']
with DAG('fan') as d:
    start = EmptyOperator(task_id='start')
    end = EmptyOperator(task_id='end')
    loads = [EmptyOperator(task_id=f'load_{{t}}') for t in TABLES]
    for t in loads:
        start >> t
        t >> end
    a = EmptyOperator(task_id='a')
    b = EmptyOperator(task_id='b')
    for x in [a, b]:
        x.set_upstream(end)
    for y in [EmptyOperator(task_id='c'), EmptyOperator(task_id='e')]:
        y << b
    for z in get_tasks():
        z >> a
    made = []
    for r in ['p', 'q']:
        op = EmptyOperator(task_id=f'x_{{r}}')
        made.append(op)
    for t in made:
        start >> t
    made >> end
"
    );
    let (dags, warnings) = read(&[("fan.py", &text)]);
    let d = &dags[0];
    assert_eq!(task(d, "load_customers").upstream, ["start"]);
    let mut into_end = task(d, "end").upstream.clone();
    into_end.sort_unstable();
    assert_eq!(
        into_end,
        ["load_customers", "load_items", "load_orders", "x_p", "x_q"]
    );
    // A name bound to a task, appended, stands for it.
    assert_eq!(task(d, "x_q").upstream, ["start"]);
    assert_eq!(task(d, "a").upstream, ["end"]);
    assert_eq!(task(d, "b").upstream, ["end"]);
    assert_eq!(task(d, "c").upstream, ["b"]);
    assert_eq!(task(d, "e").upstream, ["b"]);
    let messages: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert!(
        messages[0].contains("dependencies set in a loop are not read"),
        "{messages:#?}"
    );
}

#[test]
fn loops_inside_loops_stay_bounded() {
    let text = format!(
        "{HEADER}from airflow.operators.empty import EmptyOperator\nwith DAG('big') as d:\n    for a in range(1000):\n        for b in range(1000):\n            EmptyOperator(task_id=f'{{a}}_{{b}}')\n"
    );
    let (dags, warnings) = read(&[("big.py", &text)]);
    // 10,000 bodies read in all, outer ones counted: nine whole rows of
    // 1,001, then the tenth's own read and 990 inner ones.
    assert_eq!(dags[0].tasks.len(), 9 * 1000 + 990);
    assert!(
        warnings
            .iter()
            .any(|w| w.to_string().contains("loop iterations in one file")),
        "{warnings:#?}"
    );
}

/// Task and DAG factories as a public DAG folder writes them: a function
/// making tasks called in a loop inside a DAG, and one making whole DAGs.
const FACTORIES: &str = r#"from airflow.operators.bash import BashOperator
from airflow.utils.task_group import TaskGroup
def generate_tasks(name, dag):
    fetch = BashOperator(task_id=f"fetch_{name}", bash_command="echo", dag=dag)
    export = BashOperator(task_id=f"export_{name}", bash_command="echo", dag=dag)
    fetch >> export
    return fetch, export
def generate_dag(name):
    with DAG(dag_id=f"factory_{name}") as dag:
        a = BashOperator(task_id=f"fetch_{name}", bash_command="echo")
        b = BashOperator(task_id="done", bash_command="echo")
        a >> b
    return dag
with DAG("grouped") as d:
    start = BashOperator(task_id="start", bash_command="echo")
    for name in ["sales", "customers"]:
        with TaskGroup(name):
            first, last = generate_tasks(name, dag=d)
        start >> first
for name in ["x", "y"]:
    globals()[f"factory_{name}"] = generate_dag(name)
"#;

#[test]
fn task_and_dag_factories_are_read_with_each_call_s_arguments() {
    let (dags, warnings) = read(&[("factories.py", &format!("{HEADER}{FACTORIES}"))]);
    assert!(warnings.is_empty(), "{warnings:#?}");
    let mut ids: Vec<&str> = dags.iter().map(|d| d.dag_id.as_str()).collect();
    ids.sort_unstable();
    assert_eq!(ids, ["factory_x", "factory_y", "grouped"]);
    let grouped = dags.iter().find(|d| d.dag_id == "grouped").unwrap();
    assert_eq!(
        task(grouped, "sales.export_sales").upstream,
        ["sales.fetch_sales"]
    );
    assert_eq!(
        task(grouped, "customers.fetch_customers").upstream,
        ["start"]
    );
    let y = dags.iter().find(|d| d.dag_id == "factory_y").unwrap();
    assert_eq!(task(y, "done").upstream, ["fetch_y"]);
}

#[test]
fn task_sql_that_does_not_render_or_parse_is_reported_at_its_task() {
    let (dags, warnings) = read(&[(
        "bad_sql.py",
        &format!(
            "{HEADER}with DAG('b') as d:\n    ok = SQL(task_id='ok', sql='insert into mart.ok select * from raw.ok')\n    tmpl = SQL(task_id='tmpl', sql='insert into mart.t select * from raw.t {{% if params.full %}} where 1=1 {{% endfor %}}')\n    typo = SQL(task_id='typo', sql='inset into mart.q select 1')\n    grant = SQL(task_id='grant', sql='grant select on all tables in schema mart to bob; frobnicate the users')\n    declared = SQL(task_id='declared', sql='merge into mart.m using raw.m on', outlets=[Dataset('postgres://w/mart.m')])\n"
        ),
    )]);
    assert_eq!(task(&dags[0], "ok").writes, ["mart.ok"]);
    let found = |line: u32, code: &str| {
        warnings
            .iter()
            .find(|w| w.line == line && w.code == code)
            .unwrap_or_else(|| panic!("no {code} at line {line}: {warnings:#?}"))
            .clone()
    };
    let render = found(6, "airflow-template");
    assert!(render.message.contains("endfor"), "{render}");
    // The template kept as written does not parse: its tables are lost,
    // an error names the task.
    let lost = found(6, "parse-error");
    assert!(lost.message.contains("task `tmpl` of DAG `b`"), "{lost}");
    assert_eq!(lost.severity, ripple::project::Severity::Error);
    let typo = found(7, "parse-error");
    assert!(typo.message.contains("inset"), "{typo}");
    // A statement naming no table loses nothing; declared outlets stand in.
    let declared = found(9, "unparsed-statement");
    assert!(declared.message.contains("declared"), "{declared}");
    assert!(
        !warnings.iter().any(|w| w.line == 5),
        "the task that parses has nothing to say: {warnings:#?}"
    );
}

#[test]
fn a_table_named_by_a_variable_is_reported_not_dropped() {
    let (_, warnings) = read(&[(
        "var.py",
        &format!(
            "{HEADER}with DAG('load') as d:\n    w = SQL(task_id='w', sql=\"insert into {{{{ var.value.target }}}} (d) select d from raw.a\")\n    r = SQL(task_id='r', sql=\"insert into mart.ok (d) select d from {{{{ var.value.src }}}}\")\n    o = SQL(task_id='o', sql=\"insert into {{{{ var.value.t }}}} select 1\", outlets=[Dataset('postgres://w/mart.t')])\n"
        ),
    )]);
    let at = |line: u32| {
        warnings
            .iter()
            .find(|w| w.line == line && w.code == "unknown-table")
    };
    let write = at(5).unwrap_or_else(|| panic!("{warnings:#?}"));
    assert_eq!(write.severity, ripple::project::Severity::Error);
    assert!(
        write.message.contains("task `w`") && write.message.contains("writes"),
        "{write}"
    );
    let read = at(6).unwrap_or_else(|| panic!("{warnings:#?}"));
    assert_eq!(read.severity, ripple::project::Severity::Warning);
    // Declared outlets stand in for the unknown name.
    assert!(at(7).is_none(), "{warnings:#?}");
}

#[test]
fn a_name_assigned_none_no_longer_stands_for_a_task() {
    let body = "    prev = None\n    for t in ['a', 'b', 'c']:\n        x = EmptyOperator(task_id=f'load_{t}')\n        if prev:\n            prev >> x\n        prev = x\n";
    let (dags, warnings) = read(&[(
        "two.py",
        &format!(
            "{HEADER}from airflow.operators.empty import EmptyOperator\nwith DAG('first') as d1:\n{body}with DAG('second') as d2:\n{body}"
        ),
    )]);
    assert!(
        warnings
            .iter()
            .all(|w| w.code != "task-cycle" && w.code != "unknown-task"),
        "{warnings:#?}"
    );
    for d in &dags {
        assert!(
            task(d, "load_a").upstream.is_empty(),
            "{}: {:?}",
            d.dag_id,
            d.tasks
        );
        assert_eq!(task(d, "load_c").upstream, ["load_b"]);
    }
}

#[test]
fn dag_files_that_cannot_be_read_are_named_by_dags_and_fail_schedule() {
    // A DAG file past the size bound (and a comment line longer than any
    // statement) was dropped by `dags` and `schedule` without a word, and
    // the long comment was taken for a deep statement.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("dags")).unwrap();
    std::fs::write(
        dir.path().join("dags/ok.py"),
        format!(
            "from airflow import DAG\nwith DAG('ok', schedule='@daily') as dag:\n    pass\n#{}\n",
            "(".repeat(300_000)
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("dags/big.py"),
        format!(
            "from airflow import DAG\nwith DAG('big', schedule='@hourly') as dag:\n    pass\n#{}\n",
            "x".repeat(5_000_000)
        ),
    )
    .unwrap();
    let out = assert_cmd::Command::cargo_bin("ripple")
        .unwrap()
        .args(["dags", "--project"])
        .arg(dir.path())
        .assert()
        .success()
        .get_output()
        .clone();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("ok (dags/ok.py:2) schedule @daily"), "{text}");
    assert!(
        text.contains("error[file-too-large]: dags/big.py:1: DAG file too large to read"),
        "{text}"
    );
    assert!(!text.contains("ok.py:1"), "{text}");
    let out = assert_cmd::Command::cargo_bin("ripple")
        .unwrap()
        .args([
            "schedule",
            "--from",
            "2026-02-01",
            "--to",
            "2026-02-01",
            "--project",
        ])
        .arg(dir.path())
        .assert()
        .code(2)
        .get_output()
        .clone();
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert!(stdout.contains("ok  schedule @daily"), "{stdout}");
    assert!(
        stderr.contains("dags/big.py:1: DAG file too large")
            && stderr.contains("the schedule may lack the runs"),
        "{stderr}"
    );
}

#[test]
fn a_factory_calling_one_defined_below_it_is_read_at_its_call() {
    // Python looks a name up when the call runs: `make` calls `load`,
    // defined after it and before the DAG calls `make`. Read only in the
    // other order, this DAG once had no task and a warning that `make` was
    // never called.
    let load = "def load(name):\n    SQL(task_id=f\"load_{name}\", conn_id=\"w\", sql=f\"insert into mart.{name} select * from raw.{name}\")\n";
    let make = "def make(name):\n    load(name)\n";
    let dag = "with DAG(dag_id=\"d\", schedule=\"@daily\") as dag:\n    make(\"orders\")\n";
    for body in [format!("{load}{make}"), format!("{make}{load}")] {
        let (dags, diags) = read(&[("d.py", &format!("{HEADER}{body}{dag}"))]);
        let t = task(&dags[0], "load_orders");
        assert_eq!(t.task_id, "load_orders");
        assert!(
            diags.iter().all(|d| !d.message.contains("never calls")),
            "{diags:?}"
        );
    }
}

/// Each DAG's tasks and their upstreams within it, as Airflow itself builds
/// them (the DAG files imported by Airflow's DagBag, in the venv of
/// `scripts/engines.sh`); `None` where Airflow is not installed (a failure
/// under CI, where it must be).
fn airflows_task_graph(
    dags: &Path,
) -> Option<std::collections::BTreeMap<String, std::collections::BTreeMap<String, Vec<String>>>> {
    let Some(python) = std::env::var_os("RIPPLE_TEST_AIRFLOW_PYTHON") else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "RIPPLE_TEST_AIRFLOW_PYTHON is not set (scripts/engines.sh)"
        );
        return None;
    };
    let home = tempfile::tempdir().unwrap();
    let script = "import sys, json, warnings\nwarnings.filterwarnings('ignore')\n\
        from airflow.models.dagbag import DagBag\n\
        try:\n    bag = DagBag(dag_folder=sys.argv[1], include_examples=False)\n\
        except TypeError:\n    bag = DagBag(dag_folder=sys.argv[1])\n\
        assert not bag.import_errors, bag.import_errors\n\
        print(json.dumps({d: {t.task_id: sorted(t.upstream_task_ids) for t in dag.tasks} for d, dag in bag.dags.items()}))\n";
    let out = std::process::Command::new(python)
        .args(["-c", script])
        .arg(dags)
        .env("AIRFLOW_HOME", home.path())
        .env("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let last = text.lines().last().unwrap_or_default();
    Some(serde_json::from_str(last).unwrap())
}

#[test]
fn dependencies_are_airflows_for_groups_lists_chains_and_xcom_args() {
    // Rounds 26 and 27 found each read otherwise, silently: a group's ends
    // taken at the end of the file, lists of tasks changed in place,
    // `chain(*xs)` and `chain_linear`, `.output` inside arguments, results
    // spread with `**{...}`, `parent_group=`, setup and teardown tasks,
    // f-strings passed to factories; round 28: `.map`/`.zip` XComArgs,
    // functions that only wire tasks, starred unpacking, a group given a
    // number, `add_suffix_on_collision`, edge labels, `with dag:`.
    let head = "from datetime import datetime\nfrom airflow import DAG\n\
        from airflow.decorators import task\n\
        from airflow.operators.empty import EmptyOperator as E\n\
        from airflow.operators.bash import BashOperator\n\
        from airflow.models.baseoperator import chain, chain_linear\n\
        from airflow.utils.task_group import TaskGroup\n";
    let files = [
        (
            "groups.py",
            "with DAG('groups', schedule=None, start_date=datetime(2024, 1, 1)):\n    \
             start = E(task_id='start'); end = E(task_id='end')\n    \
             with TaskGroup('grp') as grp:\n        x = E(task_id='x'); y = E(task_id='y')\n    \
             start >> grp >> end\n    x >> y\n    with grp:\n        z = E(task_id='z')\n    \
             grp >> E(task_id='after')\n",
        ),
        (
            "lists.py",
            "with DAG('lists', schedule=None, start_date=datetime(2024, 1, 1)):\n    \
             ts = [E(task_id=f't{i}') for i in range(4)]\n    \
             a = E(task_id='a'); b = E(task_id='b'); c = E(task_id='c')\n    \
             ts.reverse()\n    ts[0] >> a\n    ts.insert(0, b)\n    del ts[1]\n    ts[1] >> c\n    \
             last = ts.pop()\n    last >> b\n    ts.remove(b)\n    ts[-1] >> E(task_id='d')\n",
        ),
        (
            "chains.py",
            "with DAG('chains', schedule=None, start_date=datetime(2024, 1, 1)):\n    \
             steps = []\n    for n in ['a', 'b', 'c']:\n        steps.append(E(task_id=f'load_{n}'))\n    \
             chain(*steps)\n    \
             p, q, r, s = [E(task_id=i) for i in ['p', 'q', 'r', 's']]\n    chain_linear([p, q], [r, s])\n    \
             k, l, m = E(task_id='k'), E(task_id='l'), E(task_id='m')\n    chain(*[k, l], m)\n",
        ),
        (
            "xcoms.py",
            "with DAG('xcoms', schedule=None, start_date=datetime(2024, 1, 1)):\n    \
             s = E(task_id='s')\n    \
             b = BashOperator(task_id='b', bash_command=s.output)\n    \
             b2 = BashOperator(task_id='b2', bash_command='echo', env={'V': s.output})\n    \
             @task\n    def consume(x):\n        return x\n    \
             consume({'k': b.output})\n    consume(s.output)\n",
        ),
        (
            "spread.py",
            "with DAG('spread', schedule=None, start_date=datetime(2024, 1, 1)):\n    \
             @task(multiple_outputs=True)\n    def extract():\n        return {'a': 1}\n    \
             @task\n    def produce():\n        return 1\n    \
             @task\n    def unpack(*args, **kw):\n        return kw\n    \
             r = extract()\n    p = produce()\n    \
             unpack(**{'k': r['a']})\n    unpack(**{'k': p})\n    unpack(*[p])\n",
        ),
        (
            "parents.py",
            "with DAG('parents', schedule=None, start_date=datetime(2024, 1, 1)):\n    \
             outer = TaskGroup('outer')\n    inner = TaskGroup('inner', parent_group=outer)\n    \
             t = E(task_id='t', task_group=inner); u = E(task_id='u', task_group=outer)\n    \
             with inner:\n        v = E(task_id='v')\n    \
             first = E(task_id='first')\n    first >> outer\n    t >> u\n    \
             with TaskGroup('o2') as o2:\n        pass\n    \
             with TaskGroup('i2', parent_group=o2, prefix_group_id=False) as i2:\n        w = E(task_id='w')\n    \
             with TaskGroup('i3', parent_group=i2) as i3:\n        x = E(task_id='x')\n    \
             o2 >> first\n",
        ),
        (
            "factories.py",
            "N = 'k'\ndef mk(tid, t):\n    return E(task_id=tid)\n\
             def make_dag(name):\n    with DAG(name, schedule=None, start_date=datetime(2024, 1, 1)) as d:\n        \
             E(task_id='x')\n    return d\n\
             with DAG('tasks_dag', schedule=None, start_date=datetime(2024, 1, 1)):\n    \
             for t in ['x1', 'x2']:\n        mk(f'load_{t}', t)\n    mk(f'c_{N}', N)\n\
             for t in ['a', 'b']:\n    globals()[f'dag_{t}'] = make_dag(f'fac_{t}')\n",
        ),
        (
            "round28.py",
            "from airflow.decorators import task_group\nfrom airflow.utils.edgemodifier import Label\n\
             def fan_out(src, dsts):\n    for d in dsts:\n        src >> d\n\
             def wire(up, down):\n    up >> down\n\
             with DAG('r28', schedule=None, start_date=datetime(2024, 1, 1)):\n    \
             @task\n    def list_files():\n        return ['a']\n    \
             @task\n    def list_sizes():\n        return [1]\n    \
             @task\n    def load(path):\n        return path\n    \
             @task\n    def pair(v):\n        return v\n    \
             files = list_files()\n    load.expand(path=files.map(lambda f: f'x/{f}'))\n    \
             pair.expand(v=files.zip(list_sizes()))\n    \
             src = E(task_id='src'); m1 = E(task_id='m1'); m2 = E(task_id='m2'); ex = E(task_id='ex')\n    \
             fan_out(src, [m1, m2])\n    wire(m1, ex)\n    \
             first, *rest = [E(task_id=f'r{i}') for i in range(3)]\n    first >> rest\n    \
             head, tail = E(task_id='head'), E(task_id='tail')\n    \
             *init, last = [E(task_id=f's{i}') for i in range(3)]\n    head >> init\n    last >> tail\n    \
             @task\n    def extract(batch_size):\n        return batch_size\n    \
             @task_group\n    def batch(size):\n        extract(size)\n    \
             batch(500)\n    batch(size=None)\n    \
             for region in ['eu', 'us']:\n        \
             with TaskGroup('ld', add_suffix_on_collision=True) as g:\n            E(task_id=f'copy_{region}')\n        \
             src >> g\n    \
             check = E(task_id='check'); full = E(task_id='full'); incr = E(task_id='incr')\n    \
             check >> Label('month start') >> full\n    check >> Label('other') >> incr\n\
             dag2 = DAG('reentered', schedule=None, start_date=datetime(2024, 1, 1))\n\
             with dag2:\n    a = E(task_id='a'); b = E(task_id='b')\n    a >> b\n",
        ),
        (
            "constants.py",
            "ENV = 'prod'\nAUDIT = False\n\
             with DAG('env', schedule=None, start_date=datetime(2024, 1, 1)):\n    \
             start = E(task_id='start')\n    \
             if ENV == 'prod':\n        pub = E(task_id='publish')\n    else:\n        pub = E(task_id='publish')\n    \
             start >> pub\n    \
             if AUDIT:\n        audit = E(task_id='audit')\n        pub >> audit\n\
             if __name__ == '__main__':\n    \
             with DAG('only_main', schedule=None, start_date=datetime(2024, 1, 1)):\n        \
             E(task_id='b')\n",
        ),
        (
            "setups.py",
            "from airflow.decorators import setup, teardown\n\
             with DAG('st_ctx', schedule=None, start_date=datetime(2024, 1, 1)):\n    \
             pre = E(task_id='pre'); create = E(task_id='create'); delete = E(task_id='delete')\n    \
             with create >> delete.as_teardown(setups=create):\n        \
             w1 = E(task_id='w1'); w2 = E(task_id='w2'); w3 = E(task_id='w3')\n        \
             w1 >> w2\n        pre >> w3\n    \
             after = E(task_id='after')\n\
             with DAG('st_plain', schedule=None, start_date=datetime(2024, 1, 1)):\n    \
             c = E(task_id='c'); d = E(task_id='d')\n    d.as_teardown(setups=c)\n    \
             e = E(task_id='e').as_setup(); f = E(task_id='f')\n    \
             with e:\n        g = E(task_id='g')\n    \
             with f.as_teardown(setups=[c, e]):\n        h = E(task_id='h')\n\
             with DAG('st_deco', schedule=None, start_date=datetime(2024, 1, 1)):\n    \
             @setup\n    def mk():\n        return 1\n    \
             @teardown\n    def rm():\n        return 1\n    \
             @task\n    def work(x):\n        return x\n    \
             s = mk()\n    w = work(s)\n    w >> rm()\n    \
             with s:\n        i = E(task_id='i')\n\
             with DAG('st_nested', schedule=None, start_date=datetime(2024, 1, 1)):\n    \
             s2 = E(task_id='s2').as_setup(); t2 = E(task_id='t2').as_teardown(setups=s2)\n    \
             with s2:\n        j = E(task_id='j')\n    \
             with t2:\n        k = E(task_id='k')\n        \
             with TaskGroup('g') as g:\n            l = E(task_id='l'); m = E(task_id='m')\n",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let dags_dir = dir.path().join("dags");
    std::fs::create_dir_all(&dags_dir).unwrap();
    for (name, body) in &files {
        std::fs::write(dags_dir.join(name), format!("{head}{body}")).unwrap();
    }
    let found = read_dags(
        dir.path(),
        std::slice::from_ref(&dags_dir),
        SqlDialect::Postgres,
    );
    let warnings: Vec<_> = found
        .check()
        .into_iter()
        .chain(found.warnings.clone())
        .collect();
    assert!(warnings.is_empty(), "{warnings:#?}");
    let ours: std::collections::BTreeMap<String, std::collections::BTreeMap<String, Vec<String>>> =
        found
            .dags
            .iter()
            .map(|d| {
                let tasks = d
                    .tasks
                    .iter()
                    .map(|t| {
                        let mut up = t.upstream.clone();
                        up.sort();
                        (t.task_id.clone(), up)
                    })
                    .collect();
                (d.dag_id.clone(), tasks)
            })
            .collect();
    let Some(airflow) = airflows_task_graph(&dags_dir) else {
        return;
    };
    assert_eq!(ours, airflow);
}

#[test]
fn a_dbt_command_with_vars_or_another_target_is_named() {
    // `--vars '{use_v2: true}'` made dbt read another source than ripple
    // showed, silently (round 26); `--target prod` is ripple's own target.
    let dir = tempfile::tempdir().unwrap();
    let files: &[(&str, &str)] = &[
        ("dbt_project.yml", "name: p\nversion: '1.0'\nprofile: p\n"),
        ("models/stg.sql", "select 1 as id\n"),
        (
            "dags/d.py",
            "from datetime import datetime\nfrom airflow import DAG\nfrom airflow.operators.bash import BashOperator\n\
             with DAG('d', schedule=None, start_date=datetime(2024, 1, 1)):\n    \
             BashOperator(task_id='stg', bash_command=\"cd /dbt && dbt run --select stg --vars '{use_v2: true}' --target=dev\")\n    \
             BashOperator(task_id='plain', bash_command='dbt run --select stg --target prod')\n",
        ),
    ];
    for (p, t) in files {
        let path = dir.path().join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, t).unwrap();
    }
    let project = load_project(dir.path(), &LoadOptions::default()).unwrap();
    let named: Vec<&str> = project
        .diagnostics
        .iter()
        .filter(|w| w.message.contains("which ripple does not apply"))
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(named.len(), 1, "{:#?}", project.diagnostics);
    assert!(
        named[0].starts_with("`stg` runs dbt with `--vars {use_v2:`"),
        "{}",
        named[0]
    );
    assert!(named[0].contains("`--target dev`"), "{}", named[0]);
}

#[test]
fn a_list_shifted_into_a_list_is_the_error_airflow_raises() {
    // Python has no `list >> list`: Airflow refuses the file (TypeError);
    // it once read as a cross product with no finding.
    let (_, findings) = read(&[(
        "ll.py",
        "from datetime import datetime\nfrom airflow import DAG\nfrom airflow.operators.empty import EmptyOperator as E\n\
         with DAG('ll', schedule=None, start_date=datetime(2024, 1, 1)):\n    \
         a, b, c, d = E(task_id='a'), E(task_id='b'), E(task_id='c'), E(task_id='d')\n    \
         [a, b] >> [c, d]\n    a >> [b, c] >> d\n",
    )]);
    let errors: Vec<_> = findings
        .iter()
        .filter(|f| f.severity == ripple::project::Severity::Error)
        .collect();
    assert_eq!(errors.len(), 1, "{findings:#?}");
    assert_eq!((errors[0].line, errors[0].column), (6, 5));
    assert!(
        errors[0].message.contains("TypeError"),
        "{}",
        errors[0].message
    );
}

#[test]
fn a_flood_of_syntax_errors_is_listed_a_hundred_at_most() {
    // 100,000 errors of one 600 KB line once printed 14 MB.
    let (_, findings) = read(&[("a.py", &"await ".repeat(300))]);
    let syntax: Vec<_> = findings
        .iter()
        .filter(|f| f.code == "python-syntax-error")
        .collect();
    assert_eq!(syntax.len(), 100);
    let more: Vec<_> = syntax
        .iter()
        .filter(|f| {
            f.message
                .contains("more syntax errors in this file are not listed")
        })
        .collect();
    assert_eq!(more.len(), 1, "{syntax:#?}");
}

#[test]
fn a_start_date_in_default_args_is_the_dags() {
    // Airflow takes it when the DAG names none; it once read as no start
    // (a `timedelta` schedule's runs then counted from 1970).
    let (dags, _) = read(&[(
        "td.py",
        "from datetime import datetime, timedelta\nfrom airflow import DAG\n\
         with DAG('td', schedule=timedelta(hours=5), default_args={'start_date': datetime(2024, 1, 1, 5)}):\n    pass\n\
         ARGS = {'start_date': '2024-02-01'}\n\
         with DAG('named', schedule='@daily', default_args=ARGS):\n    pass\n",
    )]);
    let start = |id: &str| {
        dags.iter()
            .find(|d| d.dag_id == id)
            .and_then(|d| d.start_date.clone())
    };
    assert_eq!(start("td").as_deref(), Some("datetime(2024, 1, 1, 5)"));
    assert_eq!(start("named").as_deref(), Some("2024-02-01"));
}

#[test]
fn datasets_imported_from_a_module_of_the_project_are_named() {
    // Assets kept in a shared module (the usual practice) vanished from
    // outlets and schedules with no finding (round 27).
    let (dags, findings) = read(&[
        ("common/__init__.py", ""),
        (
            "common/assets.py",
            "from airflow.sdk import Asset\nORDERS = Asset('postgres://h/db/raw/orders')\n",
        ),
        (
            "prod.py",
            "from datetime import datetime\nfrom airflow import DAG\nfrom airflow.operators.empty import EmptyOperator\nfrom common.assets import ORDERS\n\
             with DAG('producer', schedule='@daily', start_date=datetime(2024, 1, 1)):\n    EmptyOperator(task_id='p', outlets=[ORDERS])\n\
             with DAG('consumer', schedule=[ORDERS], start_date=datetime(2024, 1, 1)):\n    EmptyOperator(task_id='c')\n",
        ),
    ]);
    assert_eq!(dags.len(), 2);
    let at = |line: u32| {
        findings.iter().any(|f| {
            f.file.as_deref() == Some("dags/prod.py")
                && f.line == line
                && f.message.contains("`ORDERS`")
        })
    };
    assert!(at(6) && at(7), "{findings:#?}");
}
