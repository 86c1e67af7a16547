drop table if exists mart.streak_starts_daily;
create table mart.streak_starts_daily as
select streak_start, count(*) as streaks_started, avg(streak_days)::numeric(8,2) as avg_len,
       count(*) filter (where streak_days >= 5) as long_streaks
from mart.streaks
group by streak_start;
