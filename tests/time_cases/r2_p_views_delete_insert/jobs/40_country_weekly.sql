drop table if exists mart.country_weekly;
create table mart.country_weekly as
select date_trunc('week', order_date)::date as week_start, country,
       sum(revenue) as revenue, max(revenue_7d) as best_7d
from mart.v_country_7d
group by 1, 2;
