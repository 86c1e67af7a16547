create or replace table mart.daily_value as
select event_date, count(*) as events, sum(value) as total_value, max(loaded_at) as last_loaded_at
from mart.events_clean
group by event_date;
