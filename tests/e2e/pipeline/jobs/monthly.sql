-- Monthly revenue, upserted.
create table if not exists mart.monthly (month_start date, revenue numeric(14, 2));
merge into mart.monthly m
using (
  select cast(date_trunc('month', order_date) as date) as month_start, sum(revenue) as revenue
  from mart.orders_daily group by 1
) s on m.month_start = s.month_start
when matched then update set revenue = s.revenue
when not matched then insert (month_start, revenue) values (s.month_start, s.revenue);
