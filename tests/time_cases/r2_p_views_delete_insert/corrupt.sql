create table raw._bk as select * from raw.web_orders where ordered_at >= '2024-01-22 00:00+00' and ordered_at < '2024-01-23 00:00+00';
update raw.web_orders set status = 'test' where ordered_at >= '2024-01-22 00:00+00' and ordered_at < '2024-01-23 00:00+00' and country = 'FR';
