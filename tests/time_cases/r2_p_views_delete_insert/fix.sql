delete from raw.web_orders where ordered_at >= '2024-01-22 00:00+00' and ordered_at < '2024-01-23 00:00+00';
insert into raw.web_orders select * from raw._bk; drop table raw._bk;
