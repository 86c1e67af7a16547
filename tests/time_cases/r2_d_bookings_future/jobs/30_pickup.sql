-- straight from the feed: what was on the books per stay date
create or replace table mart.pickup_by_stay as
select stay_date, count(*) as rows_loaded, sum(price) as gross
from raw.booking_feed
group by stay_date;
