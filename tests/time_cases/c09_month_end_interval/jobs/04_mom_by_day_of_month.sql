-- month-over-month on the same day of month, via date_trunc arithmetic
create or replace table mart.mom_dom as
select a.order_date, a.revenue, b.revenue as prev_month_same_dom
from mart.daily_revenue a
left join mart.daily_revenue b
  on date_trunc('month', b.order_date) = date_trunc('month', a.order_date) - interval 1 month
 and day(b.order_date) = day(a.order_date);
