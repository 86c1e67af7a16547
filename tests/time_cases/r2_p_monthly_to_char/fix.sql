delete from raw.payments where paid_on between '2024-03-31' and '2024-04-01';
insert into raw.payments select * from raw._bk; drop table raw._bk;
