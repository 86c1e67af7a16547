set time zone 'UTC';
create schema raw; create schema mart;
create table raw.meter_reads (meter_id int, read_at timestamptz, kwh numeric(10,3));
insert into raw.meter_reads
select m, timestamptz '2024-10-25 00:00+00' + q * interval '15 minutes', (0.1 + ((m * 31 + q * 7) % 50) / 100.0)::numeric(10,3)
from generate_series(1, 6) m, generate_series(0, 4 * 24 * 5 - 1) q;
