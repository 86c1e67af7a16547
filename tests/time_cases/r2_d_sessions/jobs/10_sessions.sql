-- sessionize: a new session after 30 minutes of inactivity
create or replace table mart.sessions as
with ordered as (
  select user_id, event_ts, event_type,
         lag(event_ts) over (partition by user_id order by event_ts) as prev_ts
  from raw.events
), flagged as (
  select *, case when prev_ts is null or event_ts - prev_ts > interval 30 minute then 1 else 0 end as is_new
  from ordered
), numbered as (
  select *, sum(is_new) over (partition by user_id order by event_ts rows between unbounded preceding and current row) as session_no
  from flagged
)
select user_id,
       session_no,
       min(event_ts) as session_start,
       max(event_ts) as session_end,
       cast(min(event_ts) as date) as session_date,
       count(*) as n_events,
       count(*) filter (where event_type = 'add_to_cart') as n_carts
from numbered
group by user_id, session_no;
