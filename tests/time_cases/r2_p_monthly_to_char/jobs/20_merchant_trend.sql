drop table if exists mart.merchant_trend;
create table mart.merchant_trend as
select month_key, merchant, volume,
       lag(volume) over (partition by merchant order by month_key) as prev_volume,
       avg(volume) over (partition by merchant order by month_key rows between 2 preceding and current row)::numeric(14,2) as volume_3m_avg
from mart.merchant_month;
