create table raw._bk as select * from raw.shipments where cast(shipped_at as date) between '2024-01-31' and '2024-02-01';
delete from raw.shipments where cast(shipped_at as date) between '2024-01-31' and '2024-02-01' and carrier = 'UPS';
