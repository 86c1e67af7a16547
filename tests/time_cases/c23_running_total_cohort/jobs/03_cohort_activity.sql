-- each customer-day with the customer's first-ever order day and whether it is within 28 days of it
create or replace table mart.customer_cohort_activity as
with cd as (
    select cast(order_ts as date) as activity_date, customer_id, sum(amount) as revenue
    from raw.orders group by all
)
select activity_date, customer_id, revenue,
       min(activity_date) over (partition by customer_id) as cohort_date,
       date_diff('day', min(activity_date) over (partition by customer_id), activity_date) between 0 and 27 as in_first_4_weeks
from cd;
