create or replace table mart.next_month_same_day as
select a.order_date, a.revenue, b.revenue as revenue_next_month
from mart.daily_revenue a
left join mart.daily_revenue b on b.order_date = date_add(a.order_date, interval 1 month);
