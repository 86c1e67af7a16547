create or replace table mart.weekly_revenue_sun2 as
select cast(date_trunc('week', order_date + 1) - interval 1 day as date) as week_start, sum(revenue) as revenue
from mart.daily_revenue
group by 1;
