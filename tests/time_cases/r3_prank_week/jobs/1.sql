create or replace table mart.prank as
select d, user_id, amount, percent_rank() over (partition by date_trunc('week', d) order by amount) as pr from raw.events;
