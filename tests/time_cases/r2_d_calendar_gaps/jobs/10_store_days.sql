create or replace table mart.store_days as
with cal as (
  select cast(d as date) as d from generate_series(date '2024-04-01', date '2024-05-15', interval 1 day) g(d)
), stores as (
  select 1 as store_id union all select 2 union all select 3 union all select 4
), daily as (
  select store_id, sale_date, sum(amount) as sales, count(*) as receipts
  from raw.sales group by store_id, sale_date
), grid as (
  select st.store_id, cal.d, coalesce(daily.sales, 0) as sales, coalesce(daily.receipts, 0) as receipts
  from cal cross join stores st
  left join daily on daily.store_id = st.store_id and daily.sale_date = cal.d
)
select store_id, d as business_date, sales, receipts,
       sum(sales) over (partition by store_id order by d rows between 6 preceding and current row) as sales_7d,
       d - max(case when receipts > 0 then d end) over (partition by store_id order by d rows between unbounded preceding and current row) as days_since_last_sale
from grid;
