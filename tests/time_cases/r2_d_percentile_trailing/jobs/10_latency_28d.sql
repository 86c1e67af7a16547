create or replace table mart.latency_28d as
with days as (select distinct req_date as d from raw.requests)
select days.d as report_date, r.endpoint,
       quantile_cont(r.latency_ms, 0.9) as p90_28d,
       quantile_cont(r.latency_ms, 0.5) as p50_28d,
       count(*) as n
from days
join raw.requests r on r.req_date between days.d - interval 27 day and days.d
group by 1, 2;
