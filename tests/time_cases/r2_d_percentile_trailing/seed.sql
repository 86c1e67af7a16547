create schema raw; create schema mart;
create table raw.requests as
select r as request_id, date '2024-02-01' + cast(r % 50 as int) as req_date,
       (['/api/a','/api/b','/api/c'])[1 + r % 3] as endpoint,
       cast(20 + hash(r) % 400 + case when hash(r * 5) % 50 = 0 then 3000 else 0 end as int) as latency_ms
from range(1, 6001) t(r);
