create schema if not exists mart;
drop table if exists mart.daily_ist_ts;
create table mart.daily_ist_ts as
select date_trunc('day', event_ts, 'Asia/Kolkata') as day_start,
       count(distinct user_id) as users, sum(amount) as amount
from raw.events
group by 1;
