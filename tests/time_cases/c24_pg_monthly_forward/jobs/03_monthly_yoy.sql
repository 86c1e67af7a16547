drop table if exists mart.monthly_yoy;
create table mart.monthly_yoy as
select to_char(month_start, 'YYYY-MM') as month_key, revenue,
       lag(revenue, 12) over (order by month_start) as revenue_ly,
       revenue - lag(revenue, 1) over (order by month_start) as mom_delta
from mart.monthly_sales;
