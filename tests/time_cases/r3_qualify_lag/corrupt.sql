update raw.events set amount = 0 where d between '2026-01-20' and '2026-01-21';
