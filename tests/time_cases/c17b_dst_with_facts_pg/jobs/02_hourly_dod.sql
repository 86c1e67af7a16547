-- the dashboard compares each hour with "the same hour yesterday", NY wall clock
set timezone = 'America/New_York';
drop table if exists mart.hourly_dod;
create table mart.hourly_dod as
select a.hour_ts, a.visits, b.visits as visits_same_hour_yesterday
from mart.hourly_traffic a
left join mart.hourly_traffic b on b.hour_ts = a.hour_ts - interval '1 day';
