delete from raw.purchases where cast(purchase_ts as date) between '2024-05-10' and '2024-05-11';
insert into raw.purchases select * from raw._bk; drop table raw._bk;
