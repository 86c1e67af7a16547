delete from raw.signups where signup_date between '2025-01-01' and '2025-01-02';
insert into raw.signups select * from raw._bk; drop table raw._bk;
