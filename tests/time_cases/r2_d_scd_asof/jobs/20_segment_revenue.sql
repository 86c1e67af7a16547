create or replace table mart.daily_segment_revenue as
select o.order_date, d.segment, count(*) as orders, sum(o.amount) as revenue
from raw.orders o
join mart.dim_customer_scd d
  on d.customer_id = o.customer_id
 and o.order_date >= d.valid_from and o.order_date < d.valid_to
group by o.order_date, d.segment;
