create schema if not exists mart;
drop table if exists mart.daily_sales;
create table mart.daily_sales as
select sale_date, count(*) as n, sum(amount) as revenue from raw.sales group by sale_date;
