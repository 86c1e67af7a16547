create or replace table mart.daily_sessions as
select session_date,
       count(*) as sessions,
       count(distinct user_id) as users,
       sum(n_events) as events,
       sum(case when n_carts > 0 then 1 else 0 end) as sessions_with_cart,
       avg(epoch(session_end - session_start))::decimal(12,2) as avg_seconds
from mart.sessions
group by session_date;
