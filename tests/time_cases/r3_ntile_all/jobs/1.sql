create or replace table mart.buckets as
select d, user_id, amount, ntile(4) over (order by amount, d, user_id) as q from raw.events;
