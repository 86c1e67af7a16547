create or replace table mart.four_weeks_ago as
select a.order_date, a.revenue, b.revenue as revenue_4w_ago
from mart.daily_revenue a
left join mart.daily_revenue b on date_diff('day', b.order_date, a.order_date) = 28;
