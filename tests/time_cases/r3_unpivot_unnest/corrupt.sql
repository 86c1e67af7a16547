update raw.wide set b = b + 100 where d between '2026-01-20' and '2026-01-21';
