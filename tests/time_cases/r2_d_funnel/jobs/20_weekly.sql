create or replace table mart.weekly_conversion as
select date_trunc('week', signup_date) as signup_week,
       sum(signups) as signups, sum(converted_7d) as converted_7d,
       round(sum(converted_7d) * 1.0 / sum(signups), 4) as cr_7d
from mart.signup_conversion
group by 1;
