from datetime import datetime
from airflow import DAG
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator as Op
with DAG(dag_id="comp", schedule="@daily", start_date=datetime(2026, 1, 1)) as dag:
    ts = [Op(task_id=f"c_{i}", conn_id="w", sql=f"insert into mart.c{i} select * from raw.s") for i in range(3)]
