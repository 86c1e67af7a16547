create table raw._bk as select * from raw.purchases where cast(purchase_ts as date) between '2024-05-10' and '2024-05-11';
delete from raw.purchases where cast(purchase_ts as date) between '2024-05-10' and '2024-05-11' and user_id % 2 = 0;
