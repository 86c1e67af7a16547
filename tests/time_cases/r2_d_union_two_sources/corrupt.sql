create table raw._bk as select * from raw.store_sales where sale_day between '20240615' and '20240616';
update raw.store_sales set qty = qty * 10 where sale_day between '20240615' and '20240616' and store in ('S1', 'S2');
