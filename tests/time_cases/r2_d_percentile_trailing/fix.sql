delete from raw.requests where req_date between '2024-02-20' and '2024-02-21';
insert into raw.requests select * from raw._bk; drop table raw._bk;
