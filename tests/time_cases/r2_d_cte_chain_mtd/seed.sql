create schema raw; create schema mart;
create table raw.invoices as
select i as invoice_id, date '2024-01-01' + cast(i % 100 as int) as invoice_date,
       cast(100 + hash(i) % 900 as decimal(12,2)) as amount, case when i % 23 = 0 then 'void' else 'posted' end as status,
       'EUR' as currency
from range(1, 3001) t(i);
