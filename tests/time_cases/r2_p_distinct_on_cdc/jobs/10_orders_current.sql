drop table if exists mart.orders_current;
create table mart.orders_current as
select distinct on (order_id)
       order_id, (created_at at time zone 'UTC')::date as order_date, status, amount, updated_at
from raw.order_changes
order by order_id, updated_at desc;
