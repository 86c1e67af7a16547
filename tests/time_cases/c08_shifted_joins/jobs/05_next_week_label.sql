-- training label: revenue over the next 7 days (reads the future)
create or replace table mart.next_week_label as
select a.order_date, sum(b.revenue) as label_next_7d
from mart.daily_revenue a
left join mart.daily_revenue b on b.order_date > a.order_date and b.order_date <= a.order_date + interval 7 day
group by a.order_date;
