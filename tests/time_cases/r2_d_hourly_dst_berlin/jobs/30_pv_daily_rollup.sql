create or replace table mart.pv_daily_from_hours as
select cast(local_hour as date) as local_date, sum(views) as views, max(visitors) as peak_hour_visitors
from mart.pv_hourly_local
group by 1;
