create table raw._bk as select * from raw.payments where paid_on between '2024-03-31' and '2024-04-01';
update raw.payments set amount = -amount where paid_on between '2024-03-31' and '2024-04-01' and merchant = 'm3';
