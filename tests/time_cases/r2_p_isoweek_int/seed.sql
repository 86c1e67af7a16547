create schema raw; create schema mart;
create table raw.signups (user_id int primary key, signup_date date not null, plan text not null);
insert into raw.signups
select u, date '2024-12-01' + (u * 13 % 60), case when u % 3 = 0 then 'pro' else 'free' end
from generate_series(1, 2000) u;
