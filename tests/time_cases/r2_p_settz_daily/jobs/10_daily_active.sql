-- the business reports in New York time
set time zone 'America/New_York';
drop table if exists mart.daily_active;
create table mart.daily_active as
select event_at::date as activity_date, platform,
       count(distinct user_id) as dau, count(*) as events
from raw.app_events
group by 1, 2;
