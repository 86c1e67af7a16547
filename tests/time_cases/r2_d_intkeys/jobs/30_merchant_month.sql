create or replace table mart.merchant_month as
select strftime(strptime(cast(date_key as varchar), '%Y%m%d'), '%Y-%m') as month_key, merchant, sum(amount) as amount, sum(txns) as txns
from mart.fct_merchant_day
group by 1, 2;
