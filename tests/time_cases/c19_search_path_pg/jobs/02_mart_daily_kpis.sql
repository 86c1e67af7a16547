set search_path = mart, staging, public;
drop table if exists daily_kpis;
create table daily_kpis as
select order_date, orders, revenue,
       avg(revenue) over (order by order_date rows between 6 preceding and current row) as revenue_7d_avg
from daily_orders;
