-- best day of each ISO week, as seen from every day of the week
create or replace table mart.week_best_day as
select order_date,
       first_value(order_date) over (partition by date_trunc('week', order_date) order by revenue desc) as best_day_of_week
from mart.daily_revenue;
