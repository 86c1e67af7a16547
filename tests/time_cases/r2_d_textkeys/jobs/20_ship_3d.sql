create or replace table mart.ship_3d as
with k as (
  select day_key, carrier, parcels, cast(strptime(day_key, '%Y%m%d') as date) as d from mart.ship_day
)
select a.day_key, a.carrier, sum(b.parcels) as parcels_3d
from k a join k b on b.carrier = a.carrier and b.d between a.d - 2 and a.d
group by a.day_key, a.carrier;
