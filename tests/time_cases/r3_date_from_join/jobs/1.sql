create or replace table mart.session_revenue as
select s.session_date, count(*) as n, sum(p.amount) as revenue
from raw.payments p join raw.sessions s on s.session_id = p.session_id group by s.session_date;
