delete from raw.touches where touched_at >= '2024-04-08 00:00+00' and touched_at < '2024-04-09 00:00+00';
insert into raw.touches select * from raw._bk; drop table raw._bk;
