create schema if not exists mart;
create or replace table mart.orders_current as
select order_id, cast(created_at as date) as order_date, status, amount, updated_at
from raw.order_events
qualify row_number() over (partition by order_id order by updated_at desc) = 1;
