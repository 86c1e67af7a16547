-- days since this customer's previous order, and until the next one
create or replace table mart.customer_gaps as
select order_date, customer_id,
       date_diff('day', lag(order_date) over (partition by customer_id order by order_date), order_date) as days_since_prev,
       lead(order_date) over (partition by customer_id order by order_date) as next_order_date
from mart.customer_orders_daily;
