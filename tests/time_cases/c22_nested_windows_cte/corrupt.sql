update raw.orders set amount = amount * 6 where order_ts >= '2026-02-10' and order_ts < '2026-02-11';
