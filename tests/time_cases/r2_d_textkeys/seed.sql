create schema raw; create schema mart;
create table raw.shipments as
select s as shipment_id, timestamp '2024-01-01 00:00:00' + to_minutes(cast(s * 43 % (60*24*60) as bigint)) as shipped_at,
       (['DHL','UPS','FedEx'])[1 + s % 3] as carrier, cast(1 + hash(s) % 30 as int) as parcels
from range(1, 3001) t(s);
