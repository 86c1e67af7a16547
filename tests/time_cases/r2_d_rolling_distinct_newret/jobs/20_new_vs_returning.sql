create or replace table mart.new_vs_returning as
select l.login_date,
       count(*) filter (where not exists (
           select 1 from raw.logins p where p.user_id = l.user_id and p.login_date < l.login_date)) as new_users,
       count(*) as active_users
from raw.logins l
group by l.login_date;
