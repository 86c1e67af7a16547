create or replace table mart.user_day as
select c.d::date as d, u.user_id, coalesce(sum(e.amount), 0) as amt
from generate_series(date '2026-01-01', date '2026-03-01', interval 1 day) c(d)
cross join (select user_id, min(d) as first_d from raw.events group by user_id) u
left join raw.events e on e.d = c.d and e.user_id = u.user_id
where c.d >= u.first_d
group by all;
