create table raw._bk as select * from raw.ledger where posted_at >= '2024-03-05 00:00+00' and posted_at < '2024-03-07 00:00+00';
update raw.ledger set amount = amount * 2 where posted_at >= '2024-03-05 00:00+00' and posted_at < '2024-03-07 00:00+00' and account_id <= 6;
