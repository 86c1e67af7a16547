create schema if not exists mart;
-- every version of every order, filed under the day the order was placed
create or replace table mart.order_history as
select order_id, version, cast(created_at as date) as order_date, status, amount
from raw.order_events;
