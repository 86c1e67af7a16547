create or replace table mart.revenue_to_date as
select order_date,
       revenue,
       sum(revenue) over (partition by date_trunc('month', order_date) order by order_date) as mtd_revenue,
       sum(revenue) over (partition by date_trunc('week', order_date) order by order_date
                          rows between unbounded preceding and current row) as wtd_revenue,
       count(*) over (partition by date_trunc('month', order_date) order by order_date) as day_of_month_idx
from mart.daily_revenue;
