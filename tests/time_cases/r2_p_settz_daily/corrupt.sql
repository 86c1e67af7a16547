-- the 2024-03-10 UTC load (a DST day in New York) lost the android events
create table raw._bk as select * from raw.app_events where event_at >= '2024-03-10 00:00+00' and event_at < '2024-03-11 00:00+00';
delete from raw.app_events where event_at >= '2024-03-10 00:00+00' and event_at < '2024-03-11 00:00+00' and platform = 'android';
