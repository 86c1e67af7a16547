drop table if exists mart.monthly_sales;
create table mart.monthly_sales as
select date_trunc('month', sale_date)::date as month_start, sum(revenue) as revenue
from mart.daily_sales group by 1;
