set TimeZone='UTC'; delete from raw.app_events; insert into raw.app_events select i, timestamptz '2026-02-01 00:00:00+00' + to_seconds(i*300 + (i*17)%290), 1 + (i*31)%80 from range(0, 8064) t(i);
