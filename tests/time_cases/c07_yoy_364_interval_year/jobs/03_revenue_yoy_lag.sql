-- same thing done with a window: 364 rows back (one row per day)
create or replace table mart.revenue_yoy_lag as
select order_date, revenue, lag(revenue, 364) over (order by order_date) as revenue_ly_weekday
from mart.daily_revenue;
