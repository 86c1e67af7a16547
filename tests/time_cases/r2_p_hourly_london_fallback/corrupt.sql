create table raw._bk as select * from raw.meter_reads where read_at >= '2024-10-26 23:00+00' and read_at < '2024-10-27 03:00+00';
update raw.meter_reads set kwh = kwh * 100 where read_at >= '2024-10-26 23:00+00' and read_at < '2024-10-27 03:00+00' and meter_id in (2, 5);
