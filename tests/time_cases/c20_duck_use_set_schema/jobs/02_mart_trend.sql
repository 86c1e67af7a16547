set schema = 'mart';
create or replace table revenue_trend as
select order_date, revenue,
       lag(revenue, 7) over (order by order_date) as revenue_prev_week
from stg.orders_daily;
