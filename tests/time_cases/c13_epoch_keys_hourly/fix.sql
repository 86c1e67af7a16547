delete from raw.events; insert into raw.events select i, timestamp '2026-01-01' + to_seconds(i*420 + (i*17)%400), 1 + (i*31)%200, ((i*131)%5000)/100.0 from range(0, 18500) t(i);
