create schema if not exists mart;
create or replace table mart.sensor_hourly as
select date_trunc('hour', reading_ts) as reading_hour, sensor_id, avg(reading) as avg_reading, max(reading) as max_reading
from raw.sensor_readings
group by all;
