create or replace table mart.trailing_7d as
select a.order_date, sum(b.revenue) as revenue_7d
from mart.daily_revenue a
join mart.daily_revenue b on b.order_date between a.order_date - 6 and a.order_date
group by a.order_date;
