create schema raw; create schema mart;
create table raw.events as select date '2026-01-01' + (i % 60)::int as d, (((i // 60) * 2 + i) % 5)::int as user_id, (i*13 % 97)::int as amount from range(0,180) t(i);
