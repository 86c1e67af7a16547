from datetime import datetime
from airflow import DAG
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator as Op
with DAG(dag_id="lambda", schedule="@daily", start_date=datetime(2026, 1, 1)) as dag:
    mk = lambda n: Op(task_id=n, conn_id="w", sql="insert into mart.lam select * from raw.s")
    mk("lam")
