create or replace view stg.v_orders as
select order_id, (ordered_at at time zone 'UTC')::date as order_date, country, amount
from raw.web_orders
where status <> 'test';
