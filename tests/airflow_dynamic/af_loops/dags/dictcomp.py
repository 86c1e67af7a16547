from datetime import datetime
from airflow import DAG
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator as Op
with DAG(dag_id="dictcomp", schedule="@daily", start_date=datetime(2026, 1, 1)) as dag:
    ts = {i: Op(task_id=f"dc_{i}", conn_id="w", sql=f"insert into mart.dc{i} select * from raw.s") for i in range(2)}
