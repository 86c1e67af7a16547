create schema raw; create schema mart;
create table raw.web_orders as
select o as order_id, timestamp '2024-06-01 00:00:00' + to_minutes(cast(o * 59 % (60*24*40) as bigint)) as order_ts,
       'sku' || cast(o % 12 as varchar) as sku, cast(1 + o % 3 as int) as qty, cast(9 + hash(o) % 90 as decimal(10,2)) as amount
from range(1, 2001) t(o);
create table raw.store_sales as
select s as receipt_id, strftime(date '2024-06-01' + cast(s % 40 as int), '%Y%m%d') as sale_day, 'S' || cast(s % 4 as varchar) as store,
       'sku' || cast(s % 12 as varchar) as sku, cast(1 + s % 2 as int) as qty, cast(5 + hash(s * 3) % 60 as decimal(10,2)) as amount
from range(1, 2001) t(s);
