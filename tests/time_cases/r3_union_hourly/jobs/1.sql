create or replace table mart.activity as
select d, user_id, count(*) as n from (
  select d, user_id from raw.events
  union all
  select cast(ts as date) as d, user_id from raw.clicks) x
group by d, user_id;
