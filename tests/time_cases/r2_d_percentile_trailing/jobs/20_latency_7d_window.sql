create or replace table mart.latency_7d as
select distinct req_date, endpoint,
       quantile_cont(latency_ms, 0.95) over (partition by endpoint order by req_date range between interval 6 day preceding and current row) as p95_7d
from raw.requests;
