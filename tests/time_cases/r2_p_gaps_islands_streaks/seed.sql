create schema raw; create schema mart;
create table raw.workouts (workout_id serial primary key, user_id int not null, workout_date date not null, minutes int not null);
insert into raw.workouts (user_id, workout_date, minutes)
select u, date '2024-01-01' + d, 20 + (u * d) % 40
from generate_series(1, 30) u, generate_series(0, 59) d
where (u * 31 + d * 17 + (d / 5) * u) % 7 < 5;
