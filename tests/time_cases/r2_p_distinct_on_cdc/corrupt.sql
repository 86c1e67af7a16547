-- the CDC batch of 2024-05-20 carried wrong amounts
create table raw._bk as select * from raw.order_changes where updated_at >= '2024-05-20 00:00+00' and updated_at < '2024-05-21 00:00+00';
update raw.order_changes set amount = amount + 1000 where updated_at >= '2024-05-20 00:00+00' and updated_at < '2024-05-21 00:00+00';
