create table raw._bk as select * from raw.activity where activity_date between '2024-06-10' and '2024-06-11';
delete from raw.activity where activity_date between '2024-06-10' and '2024-06-11' and user_id % 3 = 0;
