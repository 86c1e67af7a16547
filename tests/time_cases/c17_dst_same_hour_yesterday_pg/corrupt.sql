delete from raw.hits where ts >= '2025-11-02 04:00:00+00' and ts < '2025-11-02 05:00:00+00' and hit_id % 2 = 0;
