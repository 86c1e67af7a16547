from datetime import datetime
from airflow import DAG
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator as Op
with DAG(dag_id="append", schedule="@daily", start_date=datetime(2026, 1, 1)) as dag:
    ts = []
    for i in range(3):
        ts.append(Op(task_id=f"a_{i}", conn_id="w", sql=f"insert into mart.a{i} select * from raw.s"))
