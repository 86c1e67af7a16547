create or replace table mart.revenue_yoy as
select cur.order_date,
       cur.revenue,
       ly.revenue  as revenue_same_date_last_year,
       lyw.revenue as revenue_same_weekday_last_year
from mart.daily_revenue cur
left join mart.daily_revenue ly  on ly.order_date  = cur.order_date - interval '1 year'
left join mart.daily_revenue lyw on lyw.order_date = cur.order_date - 364;
