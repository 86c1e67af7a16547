create or replace table mart.dim_customer_scd as
select customer_id, segment,
       change_date as valid_from,
       coalesce(lead(change_date) over (partition by customer_id order by change_date), date '9999-12-31') as valid_to
from raw.customer_changes;
