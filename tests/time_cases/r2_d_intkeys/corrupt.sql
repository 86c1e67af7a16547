create table raw._bk as select * from raw.card_txn where cast(txn_ts as date) between '2024-02-28' and '2024-03-01';
update raw.card_txn set amount = amount * 10 where cast(txn_ts as date) between '2024-02-28' and '2024-03-01' and merchant in ('m1','m2');
