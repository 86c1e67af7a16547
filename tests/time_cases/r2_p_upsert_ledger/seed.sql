set time zone 'UTC';
create schema raw; create schema mart;
create table raw.ledger (entry_id int primary key, account_id int not null, posted_at timestamptz not null, amount numeric(14,2) not null);
insert into raw.ledger
select e, 1 + e % 12, timestamptz '2024-03-01 00:00+00' + (e * 53 % (60*24*30)) * interval '1 minute',
       ((e * 7919) % 400 - 150)::numeric(14,2)
from generate_series(1, 3000) e;
