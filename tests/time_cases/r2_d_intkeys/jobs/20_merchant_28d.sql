create or replace table mart.merchant_28d as
select cur.date_key, cur.merchant,
       sum(prev.amount) as amount_28d, sum(prev.txns) as txns_28d
from mart.fct_merchant_day cur
join mart.fct_merchant_day prev
  on prev.merchant = cur.merchant
 and prev.date_key between cast(strftime(strptime(cast(cur.date_key as varchar), '%Y%m%d') - interval 27 day, '%Y%m%d') as int)
                       and cur.date_key
group by cur.date_key, cur.merchant;
