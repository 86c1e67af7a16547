create schema if not exists mart;
create or replace table mart.daily_revenue as
select cast(order_ts as date) as order_date,
       count(*) as orders,
       sum(amount) as revenue
from raw.orders
group by 1;
