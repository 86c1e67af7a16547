drop table if exists mart.daily_peak;
create table mart.daily_peak as
select hour_local::date as local_date, max(kwh) as peak_kwh, sum(kwh) as total_kwh, count(*) as hours
from mart.load_hourly
group by 1;
