create or replace table mart.daily_ist_dod as
select event_date, events, events - lag(events) over (order by event_date) as dod
from mart.daily_ist;
