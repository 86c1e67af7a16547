-- the Australian business day (2024-04-07 is the day daylight saving ends in Sydney)
set TimeZone = 'Australia/Sydney';
create or replace table mart.daily_sales as
select cast(date_trunc('day', created_at) as date) as business_date, count(*) as orders, sum(amount) as revenue
from raw.orders
group by 1;
