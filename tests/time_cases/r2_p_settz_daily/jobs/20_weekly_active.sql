set time zone 'America/New_York';
drop table if exists mart.weekly_active;
create table mart.weekly_active as
select date_trunc('week', event_at)::date as week_start,
       count(distinct user_id) as wau
from raw.app_events
group by 1;
