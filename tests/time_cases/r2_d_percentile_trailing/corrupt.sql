create table raw._bk as select * from raw.requests where req_date between '2024-02-20' and '2024-02-21';
update raw.requests set latency_ms = latency_ms + 5000 where req_date between '2024-02-20' and '2024-02-21' and endpoint = '/api/b';
