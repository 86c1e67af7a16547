update raw.events set user_id = 42 where d = '2026-01-20';
