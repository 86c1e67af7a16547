create or replace table mart.balance as
with recursive daily as (select d, sum(amount) as amt from raw.events group by d),
bal(d, total) as (
  select min(d), (select amt from daily where daily.d = (select min(d) from daily)) from daily
  union all
  select bal.d + 1, bal.total + coalesce((select amt from daily where daily.d = bal.d + 1), 0)
  from bal where bal.d < (select max(d) from daily))
select d, total from bal;
