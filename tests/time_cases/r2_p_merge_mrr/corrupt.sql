create table raw._bk as select * from raw.subscription_events where event_date between '2024-02-10' and '2024-02-11';
update raw.subscription_events set mrr = mrr * 3 where event_date between '2024-02-10' and '2024-02-11';
