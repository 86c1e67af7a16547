create table raw._bk as select * from raw.customer_changes where change_date between '2024-02-05' and '2024-02-06';
update raw.customer_changes set segment = 'unknown' where change_date between '2024-02-05' and '2024-02-06';
