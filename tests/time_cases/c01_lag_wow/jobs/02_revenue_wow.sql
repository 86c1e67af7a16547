-- week over week, and tomorrow's number for the "next day" dashboard column
create or replace table mart.revenue_wow as
select order_date,
       revenue,
       lag(revenue, 7) over (order by order_date) as revenue_last_week,
       revenue - lag(revenue, 7) over (order by order_date) as wow_delta,
       lead(orders, 1) over (order by order_date) as next_day_orders
from mart.daily_revenue;
