delete from raw.order_changes where updated_at >= '2024-05-20 00:00+00' and updated_at < '2024-05-21 00:00+00';
insert into raw.order_changes select * from raw._bk; drop table raw._bk;
