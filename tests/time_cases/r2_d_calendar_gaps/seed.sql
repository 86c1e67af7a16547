create schema raw; create schema mart;
-- 4 stores, sales on most days; store 3 is closed on many days
create table raw.sales as
select s as store_id, date '2024-04-01' + cast(d as int) as sale_date, r as receipt_no,
       cast(3 + hash(s * 100 + d * 7 + r) % 50 as decimal(10,2)) as amount
from range(1, 5) a(s), range(0, 45) b(d), range(0, 4) c(r)
where hash(s * 1000 + d) % (case when s = 3 then 3 else 9 end) <> 0;
