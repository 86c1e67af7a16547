create or replace table mart.user_first_seen as
select user_id, min(activity_date) as first_seen_date, count(*) as active_days
from raw.activity
group by user_id;
