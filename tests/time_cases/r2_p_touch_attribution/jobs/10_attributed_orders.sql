drop table if exists mart.attributed_orders;
create table mart.attributed_orders as
with first_touch as (
  select distinct user_id,
         first_value(channel) over (partition by user_id order by touched_at) as first_channel,
         min(touched_at) over (partition by user_id) as first_touched_at
  from raw.touches
)
select o.order_id,
       (o.ordered_at at time zone 'UTC')::date as order_date,
       o.amount,
       coalesce(ft.first_channel, 'direct') as first_channel,
       coalesce(lt.channel, 'direct') as last_channel
from raw.orders o
left join first_touch ft on ft.user_id = o.user_id and ft.first_touched_at <= o.ordered_at
left join lateral (
  select t.channel from raw.touches t
  where t.user_id = o.user_id and t.touched_at <= o.ordered_at
  order by t.touched_at desc
  limit 1
) lt on true;
