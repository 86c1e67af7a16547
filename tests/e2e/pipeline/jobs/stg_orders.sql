-- Staging, rebuilt whole every run: the drop + create style.
drop table if exists mart.stg_orders;
create table mart.stg_orders as
select order_id, customer_id, cast(ordered_at as date) as order_date, amount
from raw.orders
where status <> 'cancelled';
