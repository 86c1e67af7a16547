create or replace table mart.month_day_rank as
select order_date, revenue,
       rank() over (partition by date_trunc('month', order_date) order by revenue desc) as rank_in_month,
       ntile(3) over (partition by strftime(order_date, '%Y-%m') order by revenue) as tercile_in_month
from mart.daily_revenue;
