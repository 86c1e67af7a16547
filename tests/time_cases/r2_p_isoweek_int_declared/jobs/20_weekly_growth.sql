drop table if exists mart.weekly_growth;
create table mart.weekly_growth as
select iso_week, signups,
       lag(signups) over (order by iso_week) as prev_signups,
       round(signups::numeric / nullif(lag(signups) over (order by iso_week), 0) - 1, 4) as wow
from mart.weekly_signups;
