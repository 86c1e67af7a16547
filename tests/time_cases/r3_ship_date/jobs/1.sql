create or replace table mart.shipments as
select date_add(order_date, ship_days * interval 1 day)::date as ship_date, count(*) as n, sum(amount) as amt
from raw.orders group by 1;
