create or replace table mart.hourly_rolling as
select hour_epoch, value,
       sum(value) over (order by hour_epoch rows between 23 preceding and current row) as value_24h,
       sum(value) over (order by hour_epoch range between 21600 preceding and current row) as value_6h
from mart.hourly_epoch;
