create schema if not exists mart;
create or replace table mart.daily_kpi as
select cast(strftime(order_ts, '%Y%m%d') as integer) as date_key,
       count(*) as orders, sum(amount) as revenue
from raw.orders
group by 1;
