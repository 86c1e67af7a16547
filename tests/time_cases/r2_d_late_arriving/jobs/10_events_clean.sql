create or replace table mart.events_clean as
select event_id, event_date, value, loaded_at
from raw.events_log
qualify row_number() over (partition by event_id order by loaded_at desc) = 1;
