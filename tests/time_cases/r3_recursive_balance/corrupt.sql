update raw.events set amount = amount + 1000 where d between '2026-01-20' and '2026-01-21';
