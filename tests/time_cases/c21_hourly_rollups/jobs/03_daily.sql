create or replace table mart.sensor_daily as
select cast(reading_hour as date) as reading_date, sensor_id, max(max_reading) as peak, avg(avg_reading) as mean
from mart.sensor_hourly
group by all;
