delete from raw.orders;
insert into raw.orders select i, 1 + (i*37)%60, timestamp '2025-01-01' + to_seconds(((i*7919) % (455*86400))::bigint), ((i*131)%9000)/100.0 from range(0, 20000) t(i);
