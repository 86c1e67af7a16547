-- flags days far from their trailing 14-day band (window over a window-made column)
create or replace table mart.revenue_anomaly as
select order_date, revenue,
       revenue > 1.5 * avg(revenue_28d / 28) over (order by order_date rows between 14 preceding and 1 preceding) as is_spike
from mart.revenue_rolling;
