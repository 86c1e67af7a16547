-- the tracker lost 2024-01-20 for half the users
create table raw._bk as select * from raw.workouts where workout_date = '2024-01-20';
delete from raw.workouts where workout_date = '2024-01-20' and user_id % 2 = 0;
