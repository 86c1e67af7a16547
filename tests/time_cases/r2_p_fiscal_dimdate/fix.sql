delete from raw.pos_sales where sale_date between '2024-03-05' and '2024-03-06';
insert into raw.pos_sales select * from raw._bk; drop table raw._bk;
