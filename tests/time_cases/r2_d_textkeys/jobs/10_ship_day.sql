create or replace table mart.ship_day as
select cast(year(shipped_at) as varchar) || lpad(cast(month(shipped_at) as varchar), 2, '0') || lpad(cast(day(shipped_at) as varchar), 2, '0') as day_key,
       carrier, count(*) as shipments, sum(parcels) as parcels
from raw.shipments
group by all;
