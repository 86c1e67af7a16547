create or replace table mart.cohort_sizes as
select cohort_date, count(distinct customer_id) as customers, sum(revenue) filter (where in_first_4_weeks) as first_4w_revenue
from mart.customer_cohort_activity
group by 1;
