create or replace table mart.fct_merchant_day as
select year(txn_ts) * 10000 + month(txn_ts) * 100 + day(txn_ts) as date_key,
       merchant, count(*) as txns, sum(amount) as amount
from raw.card_txn
group by all;
