update raw.order_events set status = 'cancelled', amount = 0 where updated_at >= '2026-02-10' and updated_at < '2026-02-13';
