create table if not exists mart.country_daily (order_date date not null, country text not null, orders int not null, revenue numeric(14,2) not null);
delete from mart.country_daily where order_date >= date '2024-01-01';
insert into mart.country_daily (order_date, country, orders, revenue)
select order_date, country, count(*), sum(amount)
from stg.v_orders
where order_date >= date '2024-01-01'
group by order_date, country;
