create or replace table mart.occupancy as
select stay_date, count(*) as bookings, sum(nights) as room_nights, sum(price * nights) as revenue_on_books
from mart.bookings
group by stay_date;
