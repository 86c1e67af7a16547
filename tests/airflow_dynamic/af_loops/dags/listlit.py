from datetime import datetime
from airflow import DAG
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator as Op
with DAG(dag_id="listlit", schedule="@daily", start_date=datetime(2026, 1, 1)) as dag:
    ts = [Op(task_id="x0", conn_id="w", sql="insert into mart.x0 select * from raw.s"), Op(task_id="x1", conn_id="w", sql="insert into mart.x1 select * from raw.s")]
