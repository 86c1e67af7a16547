create table raw._bk as select * from raw.invoices where invoice_date between '2024-01-20' and '2024-01-21';
update raw.invoices set status = 'void' where invoice_date between '2024-01-20' and '2024-01-21' and invoice_id % 2 = 0;
