create schema if not exists mart;
create or replace table mart.customer_orders_daily as
select cast(order_ts as date) as order_date, customer_id, count(*) as orders, sum(amount) as revenue
from raw.orders
group by all;
