delete from raw.app_events where event_at >= '2024-03-10 00:00+00' and event_at < '2024-03-11 00:00+00';
insert into raw.app_events select * from raw._bk; drop table raw._bk;
