create or replace table mart.rolling_then_lag as
with r7 as (
    select order_date,
           sum(revenue) over (order by order_date rows between 6 preceding and current row) as revenue_7d
    from mart.daily_revenue
),
r7_prev as (
    select order_date, revenue_7d, lag(revenue_7d, 7) over (order by order_date) as revenue_7d_prev_week
    from r7
)
select order_date, revenue_7d, revenue_7d_prev_week,
       revenue_7d / nullif(revenue_7d_prev_week, 0) - 1 as wow_growth
from r7_prev;
