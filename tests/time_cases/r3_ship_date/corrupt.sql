update raw.orders set ship_days = ship_days + 9 where order_date between '2026-01-20' and '2026-01-21';
