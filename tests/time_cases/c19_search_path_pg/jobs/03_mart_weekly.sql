set search_path to mart;
drop table if exists weekly_kpis;
create table weekly_kpis as
select date_trunc('week', order_date)::date as week_start, sum(revenue) as revenue,
       sum(sum(revenue)) over (order by date_trunc('week', order_date)::date rows between 3 preceding and current row) as revenue_4w
from daily_kpis
group by 1;
reset search_path;
