create table if not exists mart.account_high_water (
  account_id int not null,
  as_of_date date not null,
  max_balance numeric(14,2) not null,
  primary key (account_id, as_of_date)
);
insert into mart.account_high_water as hw (account_id, as_of_date, max_balance)
select account_id, balance_date,
       max(closing_balance) over (partition by account_id order by balance_date)
from mart.account_balance
on conflict (account_id, as_of_date) do update
  set max_balance = greatest(hw.max_balance, excluded.max_balance);
