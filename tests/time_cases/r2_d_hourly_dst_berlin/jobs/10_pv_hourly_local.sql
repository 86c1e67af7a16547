create or replace table mart.pv_hourly_local as
select date_trunc('hour', timezone('Europe/Berlin', viewed_at)) as local_hour,
       count(*) as views, count(distinct visitor_id) as visitors
from raw.pageviews
group by 1;
