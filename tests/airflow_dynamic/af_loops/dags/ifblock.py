from datetime import datetime
from airflow import DAG
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator as Op
with DAG(dag_id="ifblock", schedule="@daily", start_date=datetime(2026, 1, 1)) as dag:
    if True:
        Op(task_id="ifb", conn_id="w", sql="insert into mart.ifb select * from raw.s")
