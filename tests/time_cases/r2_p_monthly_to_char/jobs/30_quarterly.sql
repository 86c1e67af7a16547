drop table if exists mart.merchant_quarter;
create table mart.merchant_quarter as
select date_trunc('quarter', paid_on)::date as quarter_start, merchant, sum(amount) as volume
from raw.payments
group by 1, 2;
