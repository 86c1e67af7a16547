update raw.events set amount = amount + 1000 where d = '2026-01-20';
