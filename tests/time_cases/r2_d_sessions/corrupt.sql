-- a bad load: events of 2024-03-07 and 2024-03-08 were loaded twice with a shifted clock for users 1-4, and lost for users 5-8
create table raw._backup as select * from raw.events where cast(event_ts as date) between date '2024-03-07' and date '2024-03-08';
delete from raw.events where cast(event_ts as date) between date '2024-03-07' and date '2024-03-08' and user_id > 4;
update raw.events set event_ts = event_ts + interval 50 minute where cast(event_ts as date) between date '2024-03-07' and date '2024-03-08' and user_id <= 4 and cast(event_ts + interval 50 minute as date) <= date '2024-03-08';
