create or replace table mart.all_sales as
select 'web' as channel, cast(order_ts as date) as sales_date, sku, qty, amount from raw.web_orders
union all
select 'store', cast(strptime(sale_day, '%Y%m%d') as date), sku, qty, amount from raw.store_sales;
