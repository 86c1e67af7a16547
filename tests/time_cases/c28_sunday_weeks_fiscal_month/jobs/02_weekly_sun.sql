-- retail weeks start on Sunday
create or replace table mart.weekly_revenue_sun as
select cast(order_date - cast(dayofweek(order_date) as integer) as date) as week_start_sun, sum(revenue) as revenue
from mart.daily_revenue
group by 1;
