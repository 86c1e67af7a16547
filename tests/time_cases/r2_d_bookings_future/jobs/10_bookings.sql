create or replace table mart.bookings as
select booking_id, stay_date, nights, price, loaded_at
from raw.booking_feed
qualify row_number() over (partition by booking_id order by loaded_at desc) = 1;
