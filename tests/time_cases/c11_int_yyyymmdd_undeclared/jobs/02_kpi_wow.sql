create or replace table mart.kpi_compare as
select t.date_key, t.revenue,
       w.revenue as revenue_prev_week
from mart.daily_kpi t
left join mart.daily_kpi w
  on w.date_key = cast(strftime(strptime(cast(t.date_key as varchar), '%Y%m%d') - interval 7 day, '%Y%m%d') as integer);
