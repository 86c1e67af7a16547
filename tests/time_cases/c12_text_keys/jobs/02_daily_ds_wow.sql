create or replace table mart.daily_ds_wow as
select a.ds, a.revenue, b.revenue as revenue_prev_week
from mart.daily_ds a
left join mart.daily_ds b on b.ds = cast(cast(a.ds as date) - 7 as varchar);
