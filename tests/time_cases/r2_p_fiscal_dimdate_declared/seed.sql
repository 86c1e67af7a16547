create schema raw; create schema ref; create schema mart;
-- retail 4-4-5 calendar: fiscal year 2024 starts Sunday 2024-02-04
create table ref.dim_date as
with d as (
  select g::date as calendar_date, (g::date - date '2024-02-04') as n
  from generate_series(date '2024-02-04', date '2025-02-01', interval '1 day') g
), w as (
  select *, n / 7 as fiscal_week_no from d
)
select calendar_date,
       date '2024-02-04' + fiscal_week_no * 7 as fiscal_week_start,
       (fiscal_week_no / 13) + 1 as fiscal_quarter,
       case when fiscal_week_no % 13 < 4 then 1 when fiscal_week_no % 13 < 8 then 2 else 3 end + (fiscal_week_no / 13) * 3 as fiscal_period,
       date '2024-02-04' + ((fiscal_week_no / 13) * 13 + case when fiscal_week_no % 13 < 4 then 0 when fiscal_week_no % 13 < 8 then 4 else 8 end) * 7 as fiscal_period_start
from w;
create table raw.pos_sales (sale_id int primary key, store_id int, sale_date date not null, amount numeric(12,2));
insert into raw.pos_sales
select s, 1 + s % 5, date '2024-02-04' + (s % 120), ((s * 7919) % 500 + 10)::numeric(12,2)
from generate_series(1, 4000) s;
