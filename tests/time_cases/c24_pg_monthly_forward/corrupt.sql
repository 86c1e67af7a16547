update raw.sales set amount = amount + 100 where sale_date between '2025-03-30' and '2025-04-01';
