-- yoy and mom the way the BI team does it on integer keys
create or replace table mart.kpi_compare as
select t.date_key,
       t.revenue,
       lag(t.revenue, 1) over (order by t.date_key) as revenue_prev_day,
       ly.revenue as revenue_ly,   -- same calendar day last year
       lm.revenue as revenue_lm    -- same day of last month (nulls on 29-31 and in January)
from mart.daily_kpi t
left join mart.daily_kpi ly on ly.date_key = t.date_key - 10000
left join mart.daily_kpi lm on lm.date_key = t.date_key - 100;
