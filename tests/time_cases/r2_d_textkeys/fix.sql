delete from raw.shipments where cast(shipped_at as date) between '2024-01-31' and '2024-02-01';
insert into raw.shipments select * from raw._bk; drop table raw._bk;
