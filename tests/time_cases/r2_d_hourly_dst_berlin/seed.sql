set TimeZone = 'UTC';
create schema raw; create schema mart;
create table raw.pageviews as
select p as pageview_id, timestamptz '2024-03-28 00:00:00+00' + to_minutes(cast(p * 7 % (60*24*7) as bigint)) as viewed_at,
       '/p/' || cast(p % 9 as varchar) as path, cast(hash(p) % 50 as int) as visitor_id
from range(1, 5001) t(p);
