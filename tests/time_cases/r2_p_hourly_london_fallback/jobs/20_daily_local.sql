drop table if exists mart.load_daily_local;
create table mart.load_daily_local as
select (read_at at time zone 'Europe/London')::date as local_date, meter_id,
       sum(kwh) as kwh, count(*) as reads
from raw.meter_reads
group by 1, 2;
