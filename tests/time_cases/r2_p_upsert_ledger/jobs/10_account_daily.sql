create table if not exists mart.account_daily (
  account_id int not null,
  balance_date date not null,
  net numeric(14,2) not null,
  entries int not null,
  primary key (account_id, balance_date)
);
insert into mart.account_daily (account_id, balance_date, net, entries)
select account_id, (posted_at at time zone 'UTC')::date, sum(amount), count(*)
from raw.ledger
group by 1, 2
on conflict (account_id, balance_date) do update
  set net = excluded.net, entries = excluded.entries;
