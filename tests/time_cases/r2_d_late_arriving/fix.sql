delete from raw.events_log where cast(loaded_at as date) = '2024-07-15';
insert into raw.events_log select * from raw._bk; drop table raw._bk;
