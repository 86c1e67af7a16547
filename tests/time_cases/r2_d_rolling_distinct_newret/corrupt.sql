create table raw._bk as select * from raw.logins where login_date = '2024-10-12';
delete from raw.logins where login_date = '2024-10-12' and user_id % 3 = 0;
