//! A generator of Airflow DAG files for benchmarks: each file one DAG of
//! `tasks` SQL tasks in a chain, with a TaskGroup, inline SQL and a
//! `>>` dependency per task.

use std::fmt::Write as _;
use std::path::Path;

/// Writes `files` DAG files of `tasks` tasks under `dir/dags`.
pub fn generate(dir: &Path, files: usize, tasks: usize) -> std::io::Result<()> {
    let dags = dir.join("dags");
    std::fs::create_dir_all(&dags)?;
    for f in 0..files {
        let mut py = String::from(
            "from datetime import datetime\nfrom airflow import DAG\nfrom airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator\nfrom airflow.utils.task_group import TaskGroup\n\n",
        );
        let _ = writeln!(
            py,
            "with DAG(dag_id='dag_{f}', schedule='{} 2 * * *', start_date=datetime(2024, 1, 1), default_args={{'pool': 'wh'}}) as dag:",
            f % 60
        );
        let _ = writeln!(py, "    with TaskGroup('load'):");
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
        std::fs::write(dags.join(format!("dag_{f}.py")), py)?;
    }
    Ok(())
}
