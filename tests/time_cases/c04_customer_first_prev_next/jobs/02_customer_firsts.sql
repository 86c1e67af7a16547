create or replace table mart.customer_firsts as
select order_date, customer_id,
       first_value(order_date) over (partition by customer_id order by order_date) as first_order_date,
       order_date = first_value(order_date) over (partition by customer_id order by order_date) as is_first_order_day
from mart.customer_orders_daily;
