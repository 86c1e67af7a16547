create or replace table mart.hist as
with daily as (select d, list(amount order by user_id, amount) as amts from raw.events group by d)
select d, list(amts) over (order by d rows between 3 preceding and current row) as last4,
       array_agg(d) over (order by d range between interval 2 days preceding and current row) as ds
from daily;
