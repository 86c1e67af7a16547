delete from raw.meter_reads where read_at >= '2024-10-26 23:00+00' and read_at < '2024-10-27 03:00+00';
insert into raw.meter_reads select * from raw._bk; drop table raw._bk;
