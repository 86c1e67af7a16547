create schema raw; create schema mart;
create table raw.subscription_events (sub_id int, event_date date, event_type text, mrr numeric(10,2));
insert into raw.subscription_events
select s, date '2024-01-01' + ((s * 7 + k * 23) % 80), case when k = 0 then 'new' else 'change' end, (10 * (1 + (s + k * 3) % 9))::numeric(10,2)
from generate_series(1, 60) s, generate_series(0, 3) k
where k = 0 or (s + k) % 2 = 0;
-- keep one event per sub per day
delete from raw.subscription_events a using raw.subscription_events b
where a.sub_id = b.sub_id and a.event_date = b.event_date and a.ctid < b.ctid;
