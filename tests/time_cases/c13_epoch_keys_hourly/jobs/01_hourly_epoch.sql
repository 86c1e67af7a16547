create schema if not exists mart;
create or replace table mart.hourly_epoch as
select cast(epoch(date_trunc('hour', event_ts)) as bigint) as hour_epoch,
       count(*) as events, sum(value) as value
from raw.events group by 1;
