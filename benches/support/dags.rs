//! A generator of Airflow DAG files for benchmarks: each file one DAG of
//! `tasks` SQL tasks in a chain, with a TaskGroup, inline SQL and a
//! `>>` dependency per task; then the forms of issue 15: the group as an
//! endpoint, a mapped task over literal SQL, an outlet dataset the next
//! DAG's schedule waits for, and a sensor on the previous DAG.

use std::fmt::Write as _;
use std::path::Path;

/// Writes `files` DAG files of `tasks` tasks under `dir/dags`.
pub fn generate(dir: &Path, files: usize, tasks: usize) -> std::io::Result<()> {
    let dags = dir.join("dags");
    std::fs::create_dir_all(&dags)?;
    for f in 0..files {
        let mut py = String::from(
            "from datetime import datetime\nfrom airflow import DAG\nfrom airflow.datasets import Dataset\nfrom airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator\nfrom airflow.sensors.external_task import ExternalTaskSensor\nfrom airflow.utils.task_group import TaskGroup\n\n",
        );
        // Odd DAGs wait for the dataset the DAG before them writes.
        let schedule = match f % 2 {
            1 => format!("[Dataset('postgres://wh/db/s{}/done')]", f - 1),
            _ => format!("'{} 2 * * *'", f % 60),
        };
        let _ = writeln!(
            py,
            "with DAG(dag_id='dag_{f}', schedule={schedule}, start_date=datetime(2024, 1, 1), default_args={{'pool': 'wh'}}) as dag:"
        );
        let _ = writeln!(py, "    with TaskGroup('load') as load:");
        for t in 0..tasks {
            let indent = if t < tasks / 2 { "        " } else { "    " };
            let _ = writeln!(
                py,
                "{indent}t{t} = SQLExecuteQueryOperator(task_id='t{t}', conn_id='w', sql=\"insert into s{f}.t{t} select * from s{f}.t{} where d = '{{{{ ds }}}}'\")",
                t.saturating_sub(1)
            );
        }
        for t in 1..tasks {
            let _ = writeln!(py, "    t{} >> t{t}", t - 1);
        }
        let _ = writeln!(
            py,
            "    m = SQLExecuteQueryOperator.partial(task_id='m', conn_id='w').expand(sql=['insert into s{f}.m select * from s{f}.t0', 'insert into s{f}.m select * from s{f}.t1'])"
        );
        let _ = writeln!(
            py,
            "    done = SQLExecuteQueryOperator(task_id='done', conn_id='w', sql='select 1', outlets=[Dataset('postgres://wh/db/s{f}/done')])"
        );
        let _ = writeln!(
            py,
            "    wait = ExternalTaskSensor(task_id='wait', external_dag_id='dag_{}', external_task_id='done')",
            (f + files - 1) % files
        );
        let _ = writeln!(py, "    wait >> load >> m >> done");
        std::fs::write(dags.join(format!("dag_{f}.py")), py)?;
    }
    Ok(())
}
