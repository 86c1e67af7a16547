delete from raw.orders where order_ts >= '2026-02-10' and order_ts < '2026-02-13' and customer_id % 3 = 0;
