-- every day, flagged if it was a top-5 revenue day; the ranking lives in a subquery in WHERE
create or replace table mart.top_days_context as
select d.order_date, d.revenue,
       d.order_date in (select order_date from (
            select order_date, rank() over (order by revenue desc) as rnk from mart.daily_revenue) x
          where rnk <= 5) as is_top5
from mart.daily_revenue d;
