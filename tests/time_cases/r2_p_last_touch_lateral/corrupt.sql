create table raw._bk as select * from raw.touches where touched_at >= '2024-04-08 00:00+00' and touched_at < '2024-04-09 00:00+00';
update raw.touches set channel = 'unknown' where touched_at >= '2024-04-08 00:00+00' and touched_at < '2024-04-09 00:00+00';
