-- export-friendly compact key, with the prior day's revenue
create or replace table mart.daily_compact as
select replace(ds, '-', '') as dk, revenue,
       lag(revenue) over (order by ds) as revenue_prev_day
from mart.daily_ds;
