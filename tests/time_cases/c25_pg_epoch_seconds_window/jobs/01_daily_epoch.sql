create schema if not exists mart;
drop table if exists mart.daily_epoch;
create table mart.daily_epoch as
select extract(epoch from sale_date::timestamp)::bigint as day_epoch, sum(amount) as revenue
from raw.sales group by 1;
