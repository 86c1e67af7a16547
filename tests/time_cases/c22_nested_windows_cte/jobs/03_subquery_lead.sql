create or replace table mart.subquery_lead as
select order_date, next3_avg
from (
    select order_date,
           avg(nxt) over (order by order_date rows between current row and 2 following) as next3_avg
    from (select order_date, lead(revenue, 2) over (order by order_date) as nxt from mart.daily_revenue) s1
) s2;
