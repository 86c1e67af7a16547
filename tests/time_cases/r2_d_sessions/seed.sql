create schema raw; create schema mart;
-- clickstream: 8 users, bursts of 6 events 5 minutes apart every 7 hours; bursts drift over the clock, some cross midnight
create table raw.events as
select (i % 8) + 1 as user_id,
       timestamp '2024-03-01 00:00:00'
         + to_minutes(cast(((i // 8) // 6) * 420 + ((i // 8) % 6) * 5 + (i % 8) * 37 + (hash(i) % 3) as bigint)) as event_ts,
       case hash(i*3) % 4 when 0 then 'view' when 1 then 'click' when 2 then 'view' else 'add_to_cart' end as event_type
from range(0, 2400) t(i);
