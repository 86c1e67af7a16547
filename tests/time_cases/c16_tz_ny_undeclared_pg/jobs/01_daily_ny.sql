create schema if not exists mart;
drop table if exists mart.daily_ny;
create table mart.daily_ny as
select (event_ts at time zone 'America/New_York')::date as event_date,
       count(*) as events, sum(amount) as amount
from raw.events
group by 1;
