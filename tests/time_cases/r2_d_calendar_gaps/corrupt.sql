create table raw._bk as select * from raw.sales where sale_date between '2024-04-10' and '2024-04-11';
delete from raw.sales where sale_date between '2024-04-10' and '2024-04-11' and store_id in (2, 3);
