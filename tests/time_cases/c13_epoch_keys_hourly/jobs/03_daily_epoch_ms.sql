create or replace table mart.daily_epoch_ms as
select epoch_ms(date_trunc('day', event_ts)) as day_ms, count(distinct user_id) as users, sum(value) as value
from raw.events group by 1;
