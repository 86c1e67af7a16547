create or replace table mart.pv_daily_local as
select cast(timezone('Europe/Berlin', viewed_at) as date) as local_date, path,
       count(*) as views, count(distinct visitor_id) as visitors
from raw.pageviews
group by 1, 2;
