delete from raw.orders; insert into raw.orders select i, 1 + (i*37)%60, timestamp '2025-12-01' + make_interval(secs => (i*7919) % (121*86400)), ((i*131)%9000)/100.0 from generate_series(0, 5999) i;
