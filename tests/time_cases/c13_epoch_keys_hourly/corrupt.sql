update raw.events set value = value * 9 where event_ts >= '2026-02-10 22:00' and event_ts < '2026-02-11 02:00';
