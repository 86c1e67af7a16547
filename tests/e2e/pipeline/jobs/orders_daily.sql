-- Daily totals: create if missing, empty, refill.
create table if not exists mart.orders_daily (order_date date, orders bigint, revenue numeric(14, 2));
delete from mart.orders_daily;
insert into mart.orders_daily (order_date, orders, revenue)
select order_date, count(*), sum(amount) from mart.stg_orders group by order_date;
