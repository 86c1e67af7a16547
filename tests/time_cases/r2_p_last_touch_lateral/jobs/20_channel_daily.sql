drop table if exists mart.channel_daily;
create table mart.channel_daily as
select order_date, last_channel, count(*) as orders, sum(amount) as revenue,
       count(*) as n2
from mart.attributed_orders
group by 1, 2;
