create schema if not exists mart;
drop table if exists mart.hourly_traffic;
create table mart.hourly_traffic as
select date_trunc('hour', ts) as hour_ts, count(*) as visits
from raw.hits
group by 1;
