delete from raw.booking_feed where cast(loaded_at as date) = '2024-09-12';
insert into raw.booking_feed select * from raw._bk; drop table raw._bk;
