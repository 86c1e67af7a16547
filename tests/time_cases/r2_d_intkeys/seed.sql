create schema raw; create schema mart;
create table raw.card_txn as
select t as txn_id, timestamp '2024-01-20 00:00:00' + to_minutes(cast(t * 37 % (60*24*60) as bigint)) as txn_ts,
       'm' || cast(t % 6 as varchar) as merchant, cast(1 + hash(t) % 300 as decimal(12,2)) as amount
from range(1, 4001) r(t);
