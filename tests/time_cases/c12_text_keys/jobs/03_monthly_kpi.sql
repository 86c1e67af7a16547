create or replace table mart.monthly_kpi as
select strftime(order_ts, '%Y-%m') as month_key, count(*) as orders, sum(amount) as revenue
from raw.orders group by 1;
