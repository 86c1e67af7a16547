update raw.orders set amount = amount * 4 where order_ts >= '2026-02-28' and order_ts < '2026-03-01';
