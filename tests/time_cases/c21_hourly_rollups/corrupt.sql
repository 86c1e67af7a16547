update raw.sensor_readings set reading = reading + 50 where reading_ts >= '2026-02-28 22:00' and reading_ts < '2026-03-02 02:00';
