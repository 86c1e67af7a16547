create or replace table mart.cohort_retention as
select f.first_seen_date as cohort_date,
       count(distinct f.user_id) as cohort_size,
       count(distinct case when date_diff('day', f.first_seen_date, a.activity_date) = 1 then a.user_id end) as retained_d1,
       count(distinct case when date_diff('day', f.first_seen_date, a.activity_date) = 7 then a.user_id end) as retained_d7,
       count(distinct case when date_diff('day', f.first_seen_date, a.activity_date) = 14 then a.user_id end) as retained_d14
from mart.user_first_seen f
join raw.activity a on a.user_id = f.user_id
group by f.first_seen_date;
