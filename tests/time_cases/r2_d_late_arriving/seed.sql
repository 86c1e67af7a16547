create schema raw; create schema mart;
-- each event is loaded 0-4 days after it happened; 1 in 5 is re-sent with a correction a few days later
create table raw.events_log as
select e as event_id, date '2024-07-01' + cast(e % 25 as int) as event_date,
       cast(date '2024-07-01' + cast(e % 25 + hash(e) % 5 as int) as timestamp) + to_hours(cast(hash(e*3) % 24 as bigint)) as loaded_at,
       cast(hash(e * 7) % 100 as int) as value
from range(1, 501) t(e)
union all
select e, date '2024-07-01' + cast(e % 25 as int),
       cast(date '2024-07-01' + cast(e % 25 + 5 + hash(e) % 4 as int) as timestamp) + interval 2 hour,
       cast(hash(e * 7) % 100 as int) + 1000
from range(1, 501) t(e) where e % 5 = 0;
