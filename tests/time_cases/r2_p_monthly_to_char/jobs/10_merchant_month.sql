drop table if exists mart.merchant_month;
create table mart.merchant_month as
select to_char(paid_on, 'YYYY-MM') as month_key, merchant, sum(amount) as volume, count(*) as payments
from raw.payments
group by 1, 2;
