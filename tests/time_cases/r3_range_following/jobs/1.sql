create or replace table mart.fwd as
select d, user_id, sum(amount) over (partition by user_id order by d range between current row and interval 5 days following) as next5
from raw.events;
