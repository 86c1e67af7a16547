create or replace table mart.cumulative_revenue as
select order_date, sum(revenue) over (order by order_date) as revenue_to_date,
       sum(orders) over (order by order_date rows between unbounded preceding and current row) as orders_to_date
from mart.daily_revenue;
