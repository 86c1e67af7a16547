create schema if not exists mart;
create or replace table mart.daily_ds as
select strftime(order_ts, '%Y-%m-%d') as ds, count(*) as orders, sum(amount) as revenue
from raw.orders group by 1;
