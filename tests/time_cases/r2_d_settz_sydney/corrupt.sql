set TimeZone = 'UTC';
create table raw._bk as select * from raw.orders where created_at >= timestamptz '2024-04-07 00:00:00+00' and created_at < timestamptz '2024-04-08 00:00:00+00';
update raw.orders set amount = 0 where created_at >= timestamptz '2024-04-07 00:00:00+00' and created_at < timestamptz '2024-04-08 00:00:00+00';
