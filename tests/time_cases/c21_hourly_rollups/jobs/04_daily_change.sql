-- aggregates the hours to days and compares with the day before, in one job
create or replace table mart.sensor_daily_change as
select cast(reading_hour as date) as reading_date,
       max(max_reading) as peak,
       max(max_reading) - lag(max(max_reading)) over (order by cast(reading_hour as date)) as peak_change
from mart.sensor_hourly
group by 1;
