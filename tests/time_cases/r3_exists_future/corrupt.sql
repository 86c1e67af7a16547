delete from raw.events where d = '2026-01-20';
