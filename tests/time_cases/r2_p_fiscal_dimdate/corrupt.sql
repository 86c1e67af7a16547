create table raw._bk as select * from raw.pos_sales where sale_date between '2024-03-05' and '2024-03-06';
update raw.pos_sales set amount = 0 where sale_date between '2024-03-05' and '2024-03-06';
