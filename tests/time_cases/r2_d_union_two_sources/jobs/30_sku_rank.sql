-- top skus by units, per ISO week
create or replace table mart.sku_week_rank as
select date_trunc('week', sales_date) as week_start, sku, sum(units) as units,
       rank() over (partition by date_trunc('week', sales_date) order by sum(units) desc, sku) as rnk
from mart.sku_daily
group by 1, 2;
