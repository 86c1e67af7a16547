set time zone 'UTC';
create schema raw; create schema mart;
create table raw.touches (touch_id int primary key, user_id int not null, touched_at timestamptz not null, channel text not null);
insert into raw.touches
select t, 1 + t % 150, timestamptz '2024-04-01 00:00+00' + (t * 131 % (60*24*30)) * interval '1 minute',
       (array['seo','sem','email','social','affiliate'])[1 + (t * 7) % 5]
from generate_series(1, 900) t;
create table raw.orders (order_id int primary key, user_id int not null, ordered_at timestamptz not null, amount numeric(12,2) not null);
insert into raw.orders
select o, 1 + (o * 3) % 150, timestamptz '2024-04-05 00:00+00' + (o * 97 % (60*24*30)) * interval '1 minute', ((o * 7919) % 250 + 10)::numeric(12,2)
from generate_series(1, 1200) o;
