delete from raw.ledger where posted_at >= '2024-03-05 00:00+00' and posted_at < '2024-03-07 00:00+00';
insert into raw.ledger select * from raw._bk; drop table raw._bk;
