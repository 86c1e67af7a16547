create or replace table mart.same_day_last_month as
select a.order_date, a.revenue, b.revenue as revenue_last_month
from mart.daily_revenue a
left join mart.daily_revenue b on b.order_date = a.order_date - interval 1 month;
