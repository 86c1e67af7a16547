#!/usr/bin/env bash
# A backfill all the way, on an embedded DuckDB file: the pipeline of
# fixtures/backfill_demo runs in "production" over a bad load (amounts in
# cents for 2026-01-10..2026-01-12), the load is fixed, ripple plans the
# backfill, the plan runs, and every table is compared with the same
# pipeline run from scratch on the fixed data.
#
#   bash scripts/backfill_demo.sh            # needs the DuckDB CLI: DUCKDB=/path/to/duckdb,
#                                           # `duckdb` on PATH, or eval "$(bash scripts/engines.sh all)"
set -euo pipefail
cd "$(dirname "$0")/.."

duckdb_bin=${DUCKDB:-${RIPPLE_TEST_DUCKDB:-$(command -v duckdb || true)}}
if [ -z "$duckdb_bin" ]; then
  echo "no DuckDB CLI: set DUCKDB, put duckdb on PATH, or run: eval \"\$(bash scripts/engines.sh all)\"" >&2
  exit 2
fi
ripple=${RIPPLE:-target/release/ripple}
[ -x "$ripple" ] || cargo build --release --quiet
demo=fixtures/backfill_demo
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sql() { "$duckdb_bin" -no-init -bail -noheader -list "$1" -c "$2"; }
jobs="stg_orders orders_daily v_daily orders_7d monthly dim_customers order_log"

load() { # $1 database, $2 = bad|good
  sql "$1" "create schema raw; create schema mart;
    create table raw.orders as select * from read_csv('$demo/data/orders.csv', header = true,
      columns = {'order_id': 'integer', 'customer_id': 'integer', 'ordered_at': 'timestamp', 'amount': 'decimal(12,2)', 'status': 'varchar'});"
  if [ "$2" = bad ]; then
    sql "$1" "update raw.orders set amount = amount * 100 where ordered_at >= '2026-01-10' and ordered_at < '2026-01-13'"
  fi
  for j in $jobs; do sql "$1" "$(cat "$demo/jobs/$j.sql")"; done
}

echo "== production runs over a bad load of raw.orders (2026-01-10..2026-01-12 in cents)"
load "$work/warehouse.duckdb" bad
sql "$work/warehouse.duckdb" "select order_date, revenue from mart.orders_daily where order_date between '2026-01-09' and '2026-01-13' order by 1"
echo "== the load is fixed at the source"
sql "$work/warehouse.duckdb" "update raw.orders set amount = amount / 100 where ordered_at >= '2026-01-10' and ordered_at < '2026-01-13'"

echo "== ripple impact"
"$ripple" impact raw.orders --from 2026-01-10 --to 2026-01-12 --as-of 2026-03-01 --project "$demo"
echo "== ripple plan --format shell, then run it"
"$ripple" plan raw.orders --from 2026-01-10 --to 2026-01-12 --as-of 2026-03-01 --project "$demo" --format shell -o "$work/plan.sh"
RIPPLE_SQL="$duckdb_bin -no-init -bail -noheader -list $work/warehouse.duckdb -c" bash "$work/plan.sh"
sql "$work/warehouse.duckdb" "select order_date, revenue from mart.orders_daily where order_date between '2026-01-09' and '2026-01-13' order by 1"

echo "== compared with the pipeline run from scratch on the fixed data"
load "$work/expected.duckdb" good
status=0
for t in $jobs; do
  q="select * from mart.$t order by all"
  if [ "$(sql "$work/warehouse.duckdb" "$q")" = "$(sql "$work/expected.duckdb" "$q")" ]; then
    echo "mart.$t: same"
  else
    echo "mart.$t: DIFFERENT" >&2
    status=1
  fi
done
exit $status
