-- One row per customer: unpartitioned.
drop table if exists mart.dim_customers;
create table mart.dim_customers as
select customer_id, count(*) as orders, sum(amount) as total
from mart.stg_orders group by customer_id;
