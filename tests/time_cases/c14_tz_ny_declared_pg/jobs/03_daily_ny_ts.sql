drop table if exists mart.daily_ny_ts;
create table mart.daily_ny_ts as
select date_trunc('day', event_ts, 'America/New_York') as day_start,
       count(distinct user_id) as users
from raw.events
group by 1;
