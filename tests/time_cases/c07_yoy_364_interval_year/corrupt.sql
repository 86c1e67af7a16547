update raw.orders set amount = amount * 4 where order_ts >= '2025-02-10' and order_ts < '2025-02-13';
