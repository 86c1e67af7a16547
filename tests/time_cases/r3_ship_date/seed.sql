create schema raw; create schema mart;
create table raw.orders as select date '2026-01-01' + (i % 50)::int as order_date, i as order_id, (i*7 % 6)::int as ship_days, i*3 % 50 as amount from range(0,150) t(i);
