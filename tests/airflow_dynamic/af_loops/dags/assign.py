from datetime import datetime
from airflow import DAG
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator as Op
with DAG(dag_id="assign", schedule="@daily", start_date=datetime(2026, 1, 1)) as dag:
    for i in range(3):
        t = Op(task_id=f"l_{i}", conn_id="w", sql=f"insert into mart.l{i} select * from raw.s")
