update raw.clicks set user_id = 9 where ts >= '2026-01-20 22:00' and ts < '2026-01-21 04:00';
