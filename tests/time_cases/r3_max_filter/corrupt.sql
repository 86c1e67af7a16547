delete from raw.events where d between '2026-02-28' and '2026-03-01';
