create or replace table mart.sensor_monthly as
select date_trunc('month', reading_date) as month_start, max(peak) as peak, avg(mean) as mean
from mart.sensor_daily
group by 1;
