drop table if exists mart.trailing_epoch;
create table mart.trailing_epoch as
select a.day_epoch, sum(b.revenue) as revenue_7d
from mart.daily_epoch a
join mart.daily_epoch b on b.day_epoch between a.day_epoch - 6 * 86400 and a.day_epoch
group by a.day_epoch;
