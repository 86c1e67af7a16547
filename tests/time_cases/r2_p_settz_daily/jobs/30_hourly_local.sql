set time zone 'America/New_York';
drop table if exists mart.hourly_local;
create table mart.hourly_local as
select date_trunc('hour', event_at) as local_hour, count(*) as events
from raw.app_events
group by 1;
