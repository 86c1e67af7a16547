create or replace table mart.region_day as
select e.d, u.region, sum(e.amount) as amt from raw.events e join raw.users u using (user_id) group by all;
