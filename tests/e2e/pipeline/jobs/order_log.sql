-- Appends what is newer than what it holds: reads itself.
create table if not exists mart.order_log (order_id integer, order_date date, amount numeric(12, 2));
insert into mart.order_log
select order_id, order_date, amount from mart.stg_orders
where order_date > (select coalesce(max(order_date), date '1900-01-01') from mart.order_log);
