create schema raw; create schema mart;
create table raw.app_events (event_id int primary key, user_id int not null, event_at timestamptz not null, platform text not null);
insert into raw.app_events
select e, 1 + (e * 7) % 90, timestamptz '2024-03-01 00:00+00' + (e * 17 % (60*24*20)) * interval '1 minute',
       case e % 3 when 0 then 'ios' when 1 then 'android' else 'web' end
from generate_series(1, 6000) e;
