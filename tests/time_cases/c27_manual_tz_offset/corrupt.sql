delete from raw.clicks where click_ts >= '2026-02-10 20:00' and click_ts < '2026-02-10 22:00' and click_id % 3 = 0;
