drop table if exists mart.fiscal_week_sales;
create table mart.fiscal_week_sales as
select d.fiscal_week_start, sum(s.amount) as sales
from raw.pos_sales s
join ref.dim_date d on d.calendar_date = s.sale_date
group by 1;
