create or replace table mart.monthly_mom as
select month_key, revenue,
       lag(revenue) over (order by month_key) as revenue_prev_month,
       revenue / lag(revenue) over (order by month_key) - 1 as mom_growth
from mart.monthly_kpi;
