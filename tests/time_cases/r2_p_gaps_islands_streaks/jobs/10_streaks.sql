drop table if exists mart.streaks;
create table mart.streaks as
with days as (
  select distinct user_id, workout_date from raw.workouts
), grp as (
  select user_id, workout_date,
         workout_date - (row_number() over (partition by user_id order by workout_date))::int as island
  from days
)
select user_id, min(workout_date) as streak_start, max(workout_date) as streak_end, count(*) as streak_days
from grp
group by user_id, island;
