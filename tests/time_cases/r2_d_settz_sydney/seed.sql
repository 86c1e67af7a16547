set TimeZone = 'UTC';
create schema raw; create schema mart;
create table raw.orders as
select o as order_id, timestamptz '2024-04-01 00:00:00+00' + to_minutes(cast(o * 29 % (60*24*20) as bigint)) as created_at,
       cast(10 + hash(o) % 90 as decimal(10,2)) as amount
from range(1, 3001) t(o);
