delete from raw.hits; insert into raw.hits select i, timestamptz '2025-10-25 00:00:00+00' + make_interval(secs => i*300 + (i*17)%290), 1 + (i*31)%50 from generate_series(0, 4895) i;
