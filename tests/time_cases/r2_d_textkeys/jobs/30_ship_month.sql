create or replace table mart.ship_month as
select substr(day_key, 1, 4) || '-' || substr(day_key, 5, 2) as month_key, carrier, sum(parcels) as parcels
from mart.ship_day
group by all;
