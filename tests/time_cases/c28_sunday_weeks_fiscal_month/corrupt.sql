update raw.orders set amount = amount * 2 where order_ts >= '2026-02-27' and order_ts < '2026-02-28';
