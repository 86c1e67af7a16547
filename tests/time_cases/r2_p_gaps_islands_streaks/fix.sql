delete from raw.workouts where workout_date = '2024-01-20';
insert into raw.workouts select * from raw._bk; drop table raw._bk;
