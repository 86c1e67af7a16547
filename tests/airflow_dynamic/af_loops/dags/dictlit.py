from datetime import datetime
from airflow import DAG
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator as Op
with DAG(dag_id="dictlit", schedule="@daily", start_date=datetime(2026, 1, 1)) as dag:
    ts = {"a": Op(task_id="y0", conn_id="w", sql="insert into mart.y0 select * from raw.s")}
