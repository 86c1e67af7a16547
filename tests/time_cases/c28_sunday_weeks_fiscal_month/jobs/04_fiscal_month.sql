-- fiscal months run from the 26th to the 25th, labelled by the month they end in
create or replace table mart.fiscal_month_revenue as
select cast(date_trunc('month', order_date + interval 6 day) as date) as fiscal_month, sum(revenue) as revenue
from mart.daily_revenue
group by 1;
