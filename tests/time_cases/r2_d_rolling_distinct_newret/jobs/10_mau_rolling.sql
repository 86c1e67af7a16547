create or replace table mart.active_30d as
with cal as (select distinct login_date as d from raw.logins)
select c.d as report_date, count(distinct u.user_id) as active_users_30d
from cal c
join raw.logins u on u.login_date > c.d - 30 and u.login_date <= c.d
group by c.d;
