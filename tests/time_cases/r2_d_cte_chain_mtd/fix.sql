delete from raw.invoices where invoice_date between '2024-01-20' and '2024-01-21';
insert into raw.invoices select * from raw._bk; drop table raw._bk;
