create or replace view mart.v_country_7d as
select order_date, country, revenue,
       sum(revenue) over (partition by country order by order_date range between interval '6 days' preceding and current row) as revenue_7d
from mart.country_daily;
