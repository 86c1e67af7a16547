drop table if exists mart.account_balance;
create table mart.account_balance as
select account_id, balance_date, net,
       sum(net) over (partition by account_id order by balance_date) as closing_balance
from mart.account_daily;
