create schema raw; create schema mart;
-- 200 users; each is active on a sparse set of days from a start day on
create table raw.activity as
select distinct u as user_id, date '2024-06-01' + cast(u % 20 + (hash(u * 31 + k) % 25) * (k % 2) + k // 2 * 3 as int) as activity_date,
       cast(1 + hash(u + k) % 5 as int) as sessions
from range(1, 201) a(u), range(0, 10) b(k)
where hash(u * 7 + k) % 3 <> 0 or k = 0;
-- distinct on (user_id, activity_date)
create table raw.activity2 as select user_id, activity_date, max(sessions) sessions from raw.activity group by all;
drop table raw.activity; alter table raw.activity2 rename to activity;
