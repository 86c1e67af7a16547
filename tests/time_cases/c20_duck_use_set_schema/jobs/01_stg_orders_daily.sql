use stg;
create or replace table orders_daily as
select cast(order_ts as date) as order_date, count(*) as orders, sum(amount) as revenue
from raw.orders
group by 1;
