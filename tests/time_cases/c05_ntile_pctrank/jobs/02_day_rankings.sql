create or replace table mart.day_rankings as
select order_date, revenue,
       percent_rank() over (order by revenue) as revenue_pct_rank_all_time,
       ntile(4) over (order by order_date) as time_quartile,
       cume_dist() over (partition by dayofweek(order_date) order by revenue) as dow_cume_dist
from mart.daily_revenue;
