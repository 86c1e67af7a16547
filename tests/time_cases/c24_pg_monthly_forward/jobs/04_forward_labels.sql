drop table if exists mart.forward_labels;
create table mart.forward_labels as
select a.sale_date,
       lead(a.revenue, 3) over (order by a.sale_date) as revenue_in_3_days,
       (select sum(b.revenue) from mart.daily_sales b where b.sale_date > a.sale_date and b.sale_date <= a.sale_date + 7) as next_7d_revenue
from mart.daily_sales a;
