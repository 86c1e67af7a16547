create or replace table mart.hourly_ist as
select date_trunc('hour', timezone('Asia/Kolkata', event_ts)) as hour_ist, count(*) as events
from raw.app_events
group by 1;
