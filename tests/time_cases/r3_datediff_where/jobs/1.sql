create or replace table mart.repeat as
select a.d, a.user_id, count(*) as prior_hits, sum(b.amount) as prior_amt
from raw.events a join raw.events b on a.user_id = b.user_id
where datediff('day', b.d, a.d) between 1 and 4
group by a.d, a.user_id;
