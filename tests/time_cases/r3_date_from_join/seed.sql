create schema raw; create schema mart;
create table raw.sessions as select i as session_id, date '2026-01-01' + (i % 50)::int as session_date from range(0,100) t(i);
create table raw.payments as select i as payment_id, (i*37 % 100) as session_id, i % 40 as amount, date '2026-01-01' + (i % 58)::int as paid_date from range(0,160) t(i);
