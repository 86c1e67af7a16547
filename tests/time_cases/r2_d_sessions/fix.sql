delete from raw.events where cast(event_ts as date) between date '2024-03-07' and date '2024-03-08';
insert into raw.events select * from raw._backup;
drop table raw._backup;
