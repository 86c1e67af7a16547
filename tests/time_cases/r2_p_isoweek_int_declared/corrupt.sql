create table raw._bk as select * from raw.signups where signup_date between '2025-01-01' and '2025-01-02';
delete from raw.signups where signup_date between '2025-01-01' and '2025-01-02' and user_id % 2 = 0;
