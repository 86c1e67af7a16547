delete from raw.customer_changes where change_date between '2024-02-05' and '2024-02-06';
insert into raw.customer_changes select * from raw._bk; drop table raw._bk;
