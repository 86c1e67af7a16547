from datetime import datetime
from pathlib import Path
from airflow import DAG
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator as Op
from airflow.providers.google.cloud.operators.bigquery import BigQueryInsertJobOperator
SQL_DIR = "sql"
with DAG(dag_id="d", schedule="@daily", start_date=datetime(2026, 1, 1), params={"t": "mart.p"}) as dag:
    a = Op(task_id="missing_file", conn_id="w", sql="sql/nope.sql")
    b = Op(task_id="read_text", conn_id="w", sql=Path("dags/sql/f.sql").read_text())
    c = Op(task_id="concat", conn_id="w", sql=SQL_DIR + "/f.sql")
    d = Op(task_id="include", conn_id="w", sql='{% include "sql/f.sql" %}')
    e = Op(task_id="unknown_param", conn_id="w", sql="insert into {{ params.nope }} select * from raw.s")
    f = Op(task_id="xcom", conn_id="w", sql="insert into mart.x select * from {{ ti.xcom_pull(task_ids='a') }}")
    g = BigQueryInsertJobOperator(task_id="bq", configuration={"query": {"query": "insert into mart.bq select * from raw.s", "useLegacySql": False}})
    h = Op(task_id="fmt", conn_id="w", sql="insert into mart.{} select * from raw.s".format("fmt"))
    i = Op(task_id="pct", conn_id="w", sql="insert into mart.%s select * from raw.s" % "pct")
    j = Op(task_id="filt", conn_id="w", sql="insert into mart.filt select * from {{ 'raw.s' | nosuchfilter }}")
    k = Op(task_id="callsql", conn_id="w", sql=str("insert into mart.callsql select * from raw.s"))
    l = Op(task_id="ds_tbl", conn_id="w", sql="insert into mart.t_{{ ds_nodash }} select * from raw.s")
    m = Op(task_id="loopvar", conn_id="w", sql="{% for t in ['a','b'] %}insert into mart.lv_{{ t }} select * from raw.s;{% endfor %}")
    n = Op(task_id="macro", conn_id="w", sql="{% macro x() %}mart.mac{% endmacro %}insert into {{ x() }} select * from raw.s")
    o = Op(task_id="envtbl", conn_id="w", sql="insert into {{ var.json.cfg.table }} select * from raw.s")
    p = Op(task_id="dagrun_conf", conn_id="w", sql="insert into {{ dag_run.conf['t'] }} select * from raw.s")
