create or replace table mart.sku_daily as
select sales_date, sku, sum(qty) as units, sum(amount) as revenue,
       sum(qty) filter (where channel = 'store') as store_units
from mart.all_sales
group by all;
