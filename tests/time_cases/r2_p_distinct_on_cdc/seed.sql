set time zone 'UTC';
create schema raw; create schema mart;
create table raw.order_changes (order_id int, created_at timestamptz, updated_at timestamptz, status text, amount numeric(12,2));
-- each order: created, then 0-3 status changes over the next 12 days
insert into raw.order_changes
select o, ts, ts + (k * (1 + (o * 13) % 4)) * interval '1 day' + k * interval '3 hours',
       (array['placed','paid','shipped','delivered'])[k + 1],
       (20 + (o * 37) % 180 - case when k = 3 then (o % 5) else 0 end)::numeric(12,2)
from (select o, timestamptz '2024-05-01 00:00+00' + (o * 101 % (60 * 24 * 30)) * interval '1 minute' as ts from generate_series(1, 1200) o) x,
     generate_series(0, 3) k
where k <= (o % 4);
