create schema if not exists mart;
drop table if exists mart.daily_ist;
create table mart.daily_ist as
select (event_ts at time zone 'Asia/Kolkata')::date as event_date,
       count(*) as events, sum(amount) as amount
from raw.events
group by 1;
