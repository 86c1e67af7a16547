delete from raw.sales; insert into raw.sales select i, date '2025-01-01' + ((i*7919) % 455), ((i*131)%9000)/100.0 from generate_series(0, 19999) i;
