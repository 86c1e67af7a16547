set time zone 'UTC';
create schema raw; create schema stg; create schema mart;
create table raw.web_orders (order_id int primary key, ordered_at timestamptz not null, country text not null, amount numeric(12,2) not null, status text not null);
insert into raw.web_orders
select o, timestamptz '2024-01-01 00:00+00' + (o * 41 % (60*24*50)) * interval '1 minute',
       (array['DE','FR','NL','PL'])[1 + o % 4], ((o * 7919) % 300 + 5)::numeric(12,2),
       case when o % 17 = 0 then 'test' else 'ok' end
from generate_series(1, 3000) o;
