drop table if exists mart.signups_by_year;
create table mart.signups_by_year as
select to_char(signup_date, 'YYYY') as yr, count(*) as signups
from raw.signups group by 1;
