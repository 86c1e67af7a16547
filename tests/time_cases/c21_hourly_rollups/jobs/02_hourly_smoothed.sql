create or replace table mart.sensor_hourly_smoothed as
select reading_hour, sensor_id,
       avg(avg_reading) over (partition by sensor_id order by reading_hour
                              range between interval 23 hours preceding and current row) as avg_24h
from mart.sensor_hourly;
