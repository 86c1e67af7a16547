delete from raw.card_txn where cast(txn_ts as date) between '2024-02-28' and '2024-03-01';
insert into raw.card_txn select * from raw._bk; drop table raw._bk;
