create schema if not exists mart;
create or replace table mart.daily_ist as
select cast(timezone('Asia/Kolkata', event_ts) as date) as event_date, count(*) as events, count(distinct user_id) as users
from raw.app_events
group by 1;
