delete from raw.orders where order_ts >= '2025-01-01' and order_ts < '2025-01-03' and customer_id % 4 = 1;
