delete from raw.app_events where event_ts >= timestamptz '2026-02-10 18:00:00+00' and event_ts < timestamptz '2026-02-10 19:00:00+00' and event_id % 3 = 0;
