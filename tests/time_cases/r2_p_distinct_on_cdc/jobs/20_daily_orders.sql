drop table if exists mart.daily_orders;
create table mart.daily_orders as
select order_date, count(*) as orders,
       count(*) filter (where status = 'delivered') as delivered,
       sum(amount) as gmv
from mart.orders_current
group by order_date;
