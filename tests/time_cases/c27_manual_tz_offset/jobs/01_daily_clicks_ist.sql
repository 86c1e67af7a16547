create schema if not exists mart;
-- click_ts is UTC; the India team reports on IST days (+05:30), hard-coded
create or replace table mart.daily_clicks_ist as
select cast(click_ts + interval 330 minute as date) as click_date_ist, campaign_id, count(*) as clicks
from raw.clicks
group by all;
