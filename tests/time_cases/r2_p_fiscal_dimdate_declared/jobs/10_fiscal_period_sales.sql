drop table if exists mart.fiscal_period_sales;
create table mart.fiscal_period_sales as
select d.fiscal_period_start, d.fiscal_period, s.store_id,
       sum(s.amount) as sales, count(*) as tickets
from raw.pos_sales s
join ref.dim_date d on d.calendar_date = s.sale_date
group by 1, 2, 3;
