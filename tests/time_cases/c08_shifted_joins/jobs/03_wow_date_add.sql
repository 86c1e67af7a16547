create or replace table mart.wow_date_add as
select a.order_date, a.revenue, b.revenue as revenue_prev_week
from mart.daily_revenue a
left join mart.daily_revenue b on b.order_date = date_add(a.order_date, interval (-7) day);
