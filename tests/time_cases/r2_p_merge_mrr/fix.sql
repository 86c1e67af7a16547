delete from raw.subscription_events where event_date between '2024-02-10' and '2024-02-11';
insert into raw.subscription_events select * from raw._bk; drop table raw._bk;
