-- the US team's version: fixed -5h (no DST handling)
create or replace table mart.daily_clicks_est as
select date_trunc('day', click_ts - interval '5 hours') as click_day_est, count(*) as clicks
from raw.clicks
group by 1;
