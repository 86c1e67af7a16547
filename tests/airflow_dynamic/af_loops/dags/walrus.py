from datetime import datetime
from airflow import DAG
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator as Op
with DAG(dag_id="walrus", schedule="@daily", start_date=datetime(2026, 1, 1)) as dag:
    if (t := Op(task_id="wal", conn_id="w", sql="insert into mart.wal select * from raw.s")): pass
