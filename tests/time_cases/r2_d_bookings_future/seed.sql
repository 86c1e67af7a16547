create schema raw; create schema mart;
-- hotel booking feed: loaded daily, each row a booking (or a modification) for a stay 1-40 days ahead
create table raw.booking_feed as
select b as booking_id,
       cast(date '2024-09-01' + cast(b % 30 as int) as timestamp) + to_hours(cast(hash(b) % 20 as bigint)) as loaded_at,
       date '2024-09-01' + cast(b % 30 + 1 + hash(b * 3) % 40 as int) as stay_date,
       cast(1 + hash(b * 5) % 4 as int) as nights,
       cast(80 + hash(b * 7) % 150 as decimal(10,2)) as price
from range(1, 901) t(b);
