from datetime import datetime
from airflow import DAG
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator as Op
with DAG(dag_id="tern", schedule="@daily", start_date=datetime(2026, 1, 1)) as dag:
    t = Op(task_id="tern", conn_id="w", sql="insert into mart.tern select * from raw.s") if True else None
