create schema raw; create schema mart;
create table raw.signups as
select i as user_id, date '2024-05-01' + cast(i % 30 as int) as signup_date,
       case i % 3 when 0 then 'ads' when 1 then 'organic' else 'referral' end as channel
from range(1, 301) t(i);
create table raw.purchases as
select s.user_id,
       cast(s.signup_date as timestamp) + to_hours(cast(hash(s.user_id * 7 + k) % 240 as bigint)) as purchase_ts,
       cast(10 + hash(s.user_id + k) % 90 as decimal(10,2)) as amount
from raw.signups s, range(0, 3) r(k)
where hash(s.user_id * 13 + k) % 3 = 0;
