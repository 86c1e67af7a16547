update raw.orders set amount = amount + 11 where order_ts >= '2026-02-27' and order_ts < '2026-03-03';
