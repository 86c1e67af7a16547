drop table if exists mart.daily_ny_wow;
create table mart.daily_ny_wow as
select event_date, amount,
       lag(amount, 7) over (order by event_date) as amount_last_week
from mart.daily_ny;
