set search_path to staging, raw;
drop table if exists daily_orders;
create table daily_orders as
select order_ts::date as order_date, count(*) as orders, sum(amount) as revenue
from orders
group by 1;
