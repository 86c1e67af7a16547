set TimeZone = 'UTC';
create table raw._bk as select * from raw.pageviews where viewed_at >= timestamptz '2024-03-30 22:00:00+00' and viewed_at < timestamptz '2024-03-31 04:00:00+00';
delete from raw.pageviews where viewed_at >= timestamptz '2024-03-30 22:00:00+00' and viewed_at < timestamptz '2024-03-31 04:00:00+00' and visitor_id % 2 = 0;
