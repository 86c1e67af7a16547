drop table if exists mart.attributed_orders;
create table mart.attributed_orders as
select o.order_id,
       (o.ordered_at at time zone 'UTC')::date as order_date,
       o.amount,
       coalesce(lt.channel, 'direct') as last_channel
from raw.orders o
left join lateral (
  select t.channel from raw.touches t
  where t.user_id = o.user_id and t.touched_at <= o.ordered_at
  order by t.touched_at desc
  limit 1
) lt on true;
