from datetime import datetime
from airflow import DAG
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator as Op
with DAG(dag_id="bare", schedule="@daily", start_date=datetime(2026, 1, 1)) as dag:
    Op(task_id="z0", conn_id="w", sql="insert into mart.z0 select * from raw.s")
