create or replace table mart.signup_conversion as
with first_purchase as (
  select user_id, min(cast(purchase_ts as date)) as first_purchase_date, count(*) as n_orders
  from raw.purchases
  group by user_id
)
select s.signup_date, s.channel,
       count(*) as signups,
       count(*) filter (where date_diff('day', s.signup_date, fp.first_purchase_date) between 0 and 6) as converted_7d,
       count(*) filter (where date_diff('day', s.signup_date, fp.first_purchase_date) = 0) as converted_same_day
from raw.signups s
left join first_purchase fp on fp.user_id = s.user_id
group by s.signup_date, s.channel;
