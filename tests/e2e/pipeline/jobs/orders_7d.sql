-- A 7-day rolling revenue per day.
drop table if exists mart.orders_7d;
create table mart.orders_7d as
select d.order_date, sum(w.revenue) as revenue_7d
from mart.orders_daily d
join mart.orders_daily w on w.order_date between d.order_date - interval '6 days' and d.order_date
group by d.order_date;
