create schema raw; create schema mart;
create table raw.customer_changes as
select c as customer_id, date '2024-01-01' + cast(k * 9 + c % 7 as int) as change_date,
       (['bronze','silver','gold','platinum'])[1 + cast((hash(c * 11 + k) % 4) as int)] as segment
from range(1, 41) a(c), range(0, 8) b(k)
where k = 0 or hash(c + k * 5) % 2 = 0;
create table raw.orders as
select o as order_id, 1 + o % 40 as customer_id, date '2024-01-08' + cast(o % 80 as int) as order_date,
       cast(5 + hash(o) % 200 as decimal(10,2)) as amount
from range(1, 1601) t(o);
