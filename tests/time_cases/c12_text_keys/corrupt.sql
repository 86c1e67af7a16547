update raw.orders set amount = amount + 13 where order_ts >= '2026-01-30' and order_ts < '2026-02-02';
