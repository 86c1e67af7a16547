set TimeZone = 'UTC';
delete from raw.orders where created_at >= timestamptz '2024-04-07 00:00:00+00' and created_at < timestamptz '2024-04-08 00:00:00+00';
insert into raw.orders select * from raw._bk; drop table raw._bk;
