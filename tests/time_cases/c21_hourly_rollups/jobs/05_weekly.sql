create or replace table mart.sensor_weekly as
select date_trunc('week', reading_date) as week_start, sensor_id, max(peak) as peak
from mart.sensor_daily
group by all;
