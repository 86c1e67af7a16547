set search_path = 'mart,stg';
create or replace table revenue_trend_smooth as
select order_date,
       avg(revenue_prev_week) over (order by order_date rows between 2 preceding and current row) as prev_week_3d_avg
from revenue_trend;
