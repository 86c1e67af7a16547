create or replace table mart.nextday as
with daily as (select d, sum(amount) as amt from raw.events group by d)
select d, amt, lead(amt, 3, 0) over (order by d) as amt_in_3, amt - lead(amt, 1, amt) over (order by d) as delta from daily;
