create table raw._bk as select * from raw.events_log where cast(loaded_at as date) = '2024-07-15';
update raw.events_log set value = -1 where cast(loaded_at as date) = '2024-07-15';
