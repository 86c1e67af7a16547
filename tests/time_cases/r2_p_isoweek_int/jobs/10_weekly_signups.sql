drop table if exists mart.weekly_signups;
create table mart.weekly_signups as
select (extract(isoyear from signup_date) * 100 + extract(week from signup_date))::int as iso_week,
       count(*) as signups,
       count(*) filter (where plan = 'pro') as pro_signups
from raw.signups
group by 1;
