create table raw._bk as select * from raw.booking_feed where cast(loaded_at as date) = '2024-09-12';
update raw.booking_feed set price = price * 100 where cast(loaded_at as date) = '2024-09-12';
