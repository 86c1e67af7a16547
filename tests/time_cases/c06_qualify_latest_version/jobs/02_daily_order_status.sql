create or replace table mart.daily_order_status as
select order_date, status, count(*) as orders, sum(amount) as amount
from mart.orders_current
group by order_date, status;
