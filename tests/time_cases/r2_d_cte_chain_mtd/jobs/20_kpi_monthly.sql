create or replace table mart.kpi_monthly as
with m as (
  select date_trunc('month', kpi_date) as month_start, sum(revenue) as revenue
  from mart.kpi_daily group by 1
)
select month_start, revenue,
       lag(revenue) over (order by month_start) as prev_revenue,
       round(revenue / lag(revenue) over (order by month_start) - 1, 4) as mom
from m;
