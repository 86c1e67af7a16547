create or replace table mart.revenue_rolling as
with base as (
    select order_date, revenue,
           sum(revenue) over (order by order_date
                              range between interval 27 days preceding and current row) as revenue_28d
    from mart.daily_revenue
)
select order_date,
       revenue,
       revenue_28d,
       avg(revenue) over (order by order_date rows between 3 preceding and 3 following) as centered_7d_avg,
       sum(revenue) over (order by order_date
                          range between interval '7 days' preceding and interval '1 day' preceding) as prior_7d
from base;
