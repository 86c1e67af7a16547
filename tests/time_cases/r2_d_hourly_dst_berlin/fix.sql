set TimeZone = 'UTC';
delete from raw.pageviews where viewed_at >= timestamptz '2024-03-30 22:00:00+00' and viewed_at < timestamptz '2024-03-31 04:00:00+00';
insert into raw.pageviews select * from raw._bk; drop table raw._bk;
