create or replace table mart.revenue_month_share as
select order_date,
       revenue / sum(revenue) over (partition by date_trunc('month', order_date)) as share_of_month,
       last_value(revenue) over (partition by date_trunc('month', order_date) order by order_date
                                 rows between unbounded preceding and unbounded following) as month_last_day_revenue
from mart.daily_revenue;
