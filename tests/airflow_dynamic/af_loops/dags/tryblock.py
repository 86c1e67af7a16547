from datetime import datetime
from airflow import DAG
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator as Op
with DAG(dag_id="tryblock", schedule="@daily", start_date=datetime(2026, 1, 1)) as dag:
    try:
        Op(task_id="tryb", conn_id="w", sql="insert into mart.tryb select * from raw.s")
    except Exception:
        pass
