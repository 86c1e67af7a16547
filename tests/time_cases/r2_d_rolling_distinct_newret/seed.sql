create schema raw; create schema mart;
-- each user: first login on day u % 40, then a login every 4-9 days, some users churn quickly
create table raw.logins as
select distinct u as user_id, date '2024-10-01' + cast(u % 40 + k * (4 + u % 6) as int) as login_date
from range(1, 201) a(u), range(0, 8) b(k)
where k < 2 + u % 7;
