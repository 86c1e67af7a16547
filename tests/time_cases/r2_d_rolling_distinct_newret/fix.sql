delete from raw.logins where login_date = '2024-10-12';
insert into raw.logins select * from raw._bk; drop table raw._bk;
