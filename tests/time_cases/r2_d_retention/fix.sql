delete from raw.activity where activity_date between '2024-06-10' and '2024-06-11';
insert into raw.activity select * from raw._bk; drop table raw._bk;
