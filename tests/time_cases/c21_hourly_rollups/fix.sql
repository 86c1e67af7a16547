delete from raw.sensor_readings; insert into raw.sensor_readings select timestamp '2026-01-01' + to_seconds(i*600), 1 + i%5, ((i*131)%5000)/100.0 from range(0, 12960) t(i);
