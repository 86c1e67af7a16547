create schema raw; create schema mart;
create table raw.wide as select date '2026-01-01' + i::int as d, i*3 % 11 as a, i*5 % 13 as b, i % 7 as c from range(0,60) t(i);
