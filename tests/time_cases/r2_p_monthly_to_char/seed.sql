create schema raw; create schema mart;
create table raw.payments (payment_id int primary key, merchant text, paid_on date, amount numeric(12,2));
insert into raw.payments
select p, 'm' || (p % 5), date '2024-01-01' + (p % 182), ((p * 7919) % 1000 + 1)::numeric(12,2)
from generate_series(1, 5000) p;
