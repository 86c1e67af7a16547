delete from raw.sales where sale_date between '2024-04-10' and '2024-04-11';
insert into raw.sales select * from raw._bk; drop table raw._bk;
