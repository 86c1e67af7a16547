-- previous week's total via a correlated scalar subquery
create or replace table mart.prev_week_scalar as
select a.order_date,
       (select sum(b.revenue) from mart.daily_revenue b
         where b.order_date >= a.order_date - interval 14 day
           and b.order_date <  a.order_date - interval 7 day) as prev_week_revenue
from mart.daily_revenue a;
