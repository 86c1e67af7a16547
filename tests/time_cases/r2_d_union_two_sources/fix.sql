delete from raw.store_sales where sale_day between '20240615' and '20240616';
insert into raw.store_sales select * from raw._bk; drop table raw._bk;
