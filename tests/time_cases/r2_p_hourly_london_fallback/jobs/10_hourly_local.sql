drop table if exists mart.load_hourly;
create table mart.load_hourly as
select date_trunc('hour', read_at) as hour_utc,
       date_trunc('hour', read_at at time zone 'Europe/London') as hour_local,
       sum(kwh) as kwh, count(*) as reads
from raw.meter_reads
group by 1, 2;
